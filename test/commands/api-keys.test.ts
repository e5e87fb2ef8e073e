import { expect } from 'chai';
import { apiKeyAggregate } from '../../src/commands/api-keys.js';
import { apiKeyHash, apiKeyHashesEqual, apiKeyIdOf, newApiKey } from '../../src/domain/api-keys.js';
import type { ApiKeyEvent, ApiKeyFields } from '../../src/events/api-keys.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const id = '6f1c2a8e-6d0e-4c55-9a4f-0d7a3c5e9b11';
const now = new Date('2026-03-01T12:00:00Z');

describe('API key decider', () => {
  const spec = deciderSpec(apiKeyAggregate);
  const fields: ApiKeyFields = { name: 'Billing sync', roleId: '0b9f3c1e-2a4d-4e6f-8a1b-3c5d7e9f1a2b', createdBy: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', expiresAt: '2026-06-01T00:00:00.000Z' };
  const created: ApiKeyEvent = { type: 'ApiKeyCreated', data: { id, ...fields } };
  const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { id } };

  it('creates once, with what the key is and never the key', () => {
    spec.given([]).when({ kind: 'create', id, fields }, { now }).then([created]);
    spec.given([]).when({ kind: 'create', id, fields: { ...fields, expiresAt: null } }, { now }).then([{ type: 'ApiKeyCreated', data: { id, ...fields, expiresAt: null } }]);
    spec.given([created]).when({ kind: 'create', id, fields }, { now }).then(refused('conflict'));
  });

  it('refuses an expiry that is not in the future', () => {
    for (const expiresAt of [now.toISOString(), '2026-02-28T00:00:00.000Z']) {
      const error = spec.given([]).when({ kind: 'create', id, fields: { ...fields, expiresAt } }, { now }).then(refused('invalid', /future/));
      expect(error.details).to.deep.equal([{ path: 'expiresAt', message: 'must be in the future', code: 'too_small' }]);
    }
  });

  it('revokes a key once, expired or not; an absent key is not found', () => {
    spec.given([created]).when({ kind: 'revoke', id }, { now }).then([revoked]);
    // Past its expiry it is still a key of the tenant, and revoking it is still recorded.
    spec.given([created]).when({ kind: 'revoke', id }, { now: new Date('2027-01-01T00:00:00Z') }).then([revoked]);
    spec.given([created, revoked]).when({ kind: 'revoke', id }, { now }).then(refused('conflict', /already revoked/));
    spec.given([]).when({ kind: 'revoke', id }, { now }).then(refused('not_found'));
  });

  it('folds to the key and its status', () => {
    expect(spec.given([created]).state).to.deep.equal({ status: 'active', fields });
    expect(spec.given([created, revoked]).state).to.deep.equal({ status: 'revoked', fields });
  });
});

describe('API key format', () => {
  it('is crm_<key id>_<43 base64url characters>, its id readable, anything else garbled', () => {
    const key = newApiKey(id);
    expect(key).to.match(/^crm_6f1c2a8e-6d0e-4c55-9a4f-0d7a3c5e9b11_[A-Za-z0-9_-]{43}$/);
    expect(apiKeyIdOf(key)).to.equal(id);
    expect(newApiKey(id)).to.not.equal(key);
    for (const garbled of [`crm_${id}`, `crm_${id}_short`, `crm_not-a-uuid_${'a'.repeat(43)}`, `${key}x`, key.replace('crm_', 'CRM_')]) {
      expect(apiKeyIdOf(garbled), garbled).to.equal(null);
    }
  });

  it('compares hashes in full: the same key matches, any other does not', () => {
    const key = newApiKey(id);
    expect(apiKeyHashesEqual(apiKeyHash(key), apiKeyHash(key))).to.equal(true);
    expect(apiKeyHashesEqual(apiKeyHash(key), apiKeyHash(newApiKey(id)))).to.equal(false);
    expect(apiKeyHashesEqual(apiKeyHash(key), '')).to.equal(false);
  });
});

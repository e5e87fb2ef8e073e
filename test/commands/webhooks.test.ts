import { webhookSubscriptionAggregate } from '../../src/commands/webhooks.js';
import type { WebhookSubscriptionEvent, WebhookSubscriptionFields } from '../../src/events/webhooks.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const id = '0b5d8f7e-2c4a-4e1b-9f3d-6a7c8e9d0f12';

describe('webhook subscription decider', () => {
  const spec = deciderSpec(webhookSubscriptionAggregate);
  const fields: WebhookSubscriptionFields = { url: 'https://hooks.example.com/crm', eventTypes: ['LeadCreated'], description: null, active: true };
  const created: WebhookSubscriptionEvent = { type: 'WebhookSubscriptionCreated', data: { id, ...fields } };
  const deleted: WebhookSubscriptionEvent = { type: 'WebhookSubscriptionDeleted', data: { id } };

  it('creates once', () => {
    spec.given([]).when({ kind: 'create', id, fields }).then([created]);
    spec.given([created]).when({ kind: 'create', id, fields }).then(refused('conflict'));
    spec.given([created, deleted]).when({ kind: 'create', id, fields }).then(refused('conflict'));
  });

  it('updates only what changes; nothing when nothing does', () => {
    spec.given([created]).when({ kind: 'update', id, changes: { active: false, eventTypes: ['LeadCreated'] } }).then([{ type: 'WebhookSubscriptionUpdated', data: { id, changes: { active: false } } }]);
    spec.given([created]).when({ kind: 'update', id, changes: { eventTypes: ['*'], url: fields.url } }).then([{ type: 'WebhookSubscriptionUpdated', data: { id, changes: { eventTypes: ['*'] } } }]);
    spec.given([created]).when({ kind: 'update', id, changes: { url: fields.url, description: null } }).then([]);
  });

  it('rotates the secret of a live subscription (the event carries no secret)', () => {
    spec.given([created]).when({ kind: 'rotate-secret', id }).then([{ type: 'WebhookSecretRotated', data: { id } }]);
    spec.given([created, { type: 'WebhookSecretRotated', data: { id } }]).when({ kind: 'rotate-secret', id }).then([{ type: 'WebhookSecretRotated', data: { id } }]);
  });

  it('deletes a live subscription; a deleted or absent one is not found for every command', () => {
    spec.given([created]).when({ kind: 'delete', id }).then([deleted]);
    for (const command of [{ kind: 'delete', id }, { kind: 'update', id, changes: { active: false } }, { kind: 'rotate-secret', id }] as const) {
      spec.given([created, deleted]).when(command).then(refused('not_found'));
      spec.given([]).when(command).then(refused('not_found'));
    }
  });
});

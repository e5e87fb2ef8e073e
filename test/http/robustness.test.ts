import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * No input may cause a 500: every write endpoint gets each field set to values of every
 * JSON type and shape (and a few strings that trouble databases), and must answer 2xx or
 * 4xx. The values are the same for every field, so a new endpoint only needs its row.
 */
describe('robustness: odd input never causes a 500', () => {
  let service: TestService;
  let admin: Session;
  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const ODD_VALUES: unknown[] = [
    null, 0, -1, 1.5, 1e308, '', 'x', ' ', 'a'.repeat(5_000), '\u0000', "'; drop table leads; --", '%_\\', '😀', true, [], [1, 'a'], {},
    { a: { b: [null] } }, { constructor: 1 }, randomUUID(), '2026-02-30', '9999-12-31T23:59:59Z',
  ];

  async function fuzz(targets: [method: string, path: string, fields: string[]][]): Promise<string[]> {
    const failures: string[] = [];
    for (const [method, path, fields] of targets) {
      for (const field of fields) {
        for (const value of ODD_VALUES) {
          const res = await call(method, path, { [field]: value });
          if (res.status >= 500) failures.push(`${method} ${path} {${field}: ${JSON.stringify(value).slice(0, 40)}} → ${res.status}`);
        }
      }
    }
    return failures;
  }

  it('leads and lead settings', async () => {
    const lead = (await call('POST', '/leads', { lastName: 'Odd' })).body;
    const stage = (await call('GET', '/lead-settings/stages')).body[1];
    const failures = await fuzz([
      ['POST', '/leads', ['lastName', 'email', 'phone', 'priority', 'stageId', 'pipelineId', 'estimatedValue', 'customFields', 'qualification', 'address', 'ownerId', 'website']],
      ['PUT', `/leads/${lead.id}`, ['lastName', 'priority', 'stageId', 'pipelineId', 'estimatedValue', 'customFields', 'qualification', 'ownerId']],
      ['POST', `/leads/${lead.id}/change-stage`, ['stageId', 'stageFieldValues', 'unlockReason']],
      ['POST', `/leads/${lead.id}/disqualify`, ['reason', 'reasonId', 'notes']],
      ['POST', '/leads/check-duplicates', ['email', 'phone', 'excludeId']],
      ['PUT', '/leads/bulk-update', ['ids', 'changes']],
      ['DELETE', '/leads/bulk-delete', ['ids']],
      ['POST', `/leads/${lead.id}/products`, ['productId', 'quantity', 'unitPrice', 'discount', 'discountType']],
      ['POST', `/leads/${lead.id}/team`, ['userId', 'role']],
      ['POST', `/leads/${lead.id}/notes`, ['content']],
      ['POST', '/lead-settings/pipelines', ['name', 'stageMovement', 'isDefault', 'sortOrder']],
      ['POST', '/lead-settings/stages', ['name', 'pipelineId', 'module', 'probability', 'requiredFields']],
      ['PUT', `/lead-settings/stages/${stage.id}`, ['name', 'probability', 'isActive', 'requiredFields']],
      ['PUT', '/lead-settings/stages/reorder', ['orderedIds', 'module', 'pipelineId']],
      ['POST', `/lead-settings/stages/${stage.id}/fields`, ['fieldKey', 'fieldLabel', 'fieldType', 'fieldOptions']],
      ['PUT', `/lead-settings/stages/${stage.id}/fields`, ['fields']],
      ['PUT', `/lead-settings/stage-ownership/${stage.id}`, ['stageOwnerType', 'stageOwnerUserId', 'fieldVisibility']],
      ['PUT', `/lead-settings/field-visibility/${stage.id}`, ['fieldVisibility']],
      ['POST', '/lead-settings/priorities', ['name', 'scoreMin', 'scoreMax']],
      ['POST', '/lead-settings/scoring-rules', ['name', 'fieldKey', 'operator', 'value', 'scoreDelta']],
      ['PUT', '/lead-settings/settings', ['sla', 'general', 'stages']],
      ['PUT', '/lead-settings/qualification-threshold', ['threshold', 'autoQualify']],
    ]);
    for (const query of ['page=abc', 'limit=-1', 'sortBy[]=a', 'search[a]=1', 'stageId=1', 'priority=%00', 'view=kanban&limit=0', 'status[]=open', `search=${'%25'.repeat(300)}`]) {
      const res = await call('GET', `/leads?${query}`);
      if (res.status >= 500) failures.push(`GET /leads?${query} → ${res.status}`);
    }
    for (const query of ['dateFrom=x', 'dateFrom=99999999999999999', 'ownerId=1', 'pipelineId[]=1']) {
      const res = await call('GET', `/leads/sla/summary?${query}`);
      if (res.status >= 500) failures.push(`GET /leads/sla/summary?${query} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('contacts, accounts, users and the organisation', async () => {
    const contact = (await call('POST', '/contacts', { lastName: 'Odd' })).body;
    const account = (await call('POST', '/accounts', { name: 'Odd Co' })).body;
    const failures = await fuzz([
      ['POST', '/contacts', ['lastName', 'email', 'phone', 'mailingAddress', 'customFields', 'ownerId']],
      ['PUT', `/contacts/${contact.id}`, ['lastName', 'email', 'customFields', 'ownerId']],
      ['POST', `/contacts/${contact.id}/accounts/${account.id}`, ['role']],
      ['POST', '/accounts', ['name', 'type', 'annualRevenue', 'employees', 'parentAccountId', 'website']],
      ['PUT', `/accounts/${account.id}`, ['name', 'parentAccountId', 'annualRevenue']],
      ['POST', '/users', ['email', 'password', 'firstName', 'roleId', 'departmentId', 'managerId']],
      ['POST', '/users/invite', ['email', 'roleId']],
      ['PUT', '/users/me/email-signature', ['signature', 'emailSignature']],
      ['POST', '/roles', ['name', 'level', 'permissions', 'recordAccess']],
      ['POST', '/departments', ['name', 'parentId', 'headId']],
      ['POST', '/teams', ['name', 'leadId', 'memberIds']],
      ['POST', '/auth/login', ['tenantSlug', 'email', 'password']],
      ['POST', '/auth/refresh', ['refreshToken']],
      ['POST', '/auth/forgot-password', ['email', 'tenantSlug']],
      ['POST', '/auth/reset-password', ['token', 'password']],
      ['POST', '/auth/change-password', ['currentPassword', 'newPassword']],
    ]);
    expect(failures).to.deep.equal([]);
  });
});

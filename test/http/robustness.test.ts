import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { MAGIC, sendMultipart, type Part } from '../support/multipart.js';
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
    // Public form submits are limited per IP; every request here comes from one address.
    service = await startTestService({ FORM_SUBMIT_LIMIT_PER_IP: '1000000' });
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  /** `levels` objects nested in one another. */
  const nested = (levels: number): unknown => (levels === 0 ? 'deep' : { a: nested(levels - 1) });
  const ODD_VALUES: unknown[] = [
    null, 0, -1, 1.5, 1e308, '', 'x', ' ', 'a'.repeat(5_000), '\u0000', "'; drop table leads; --", '%_\\', '😀', true, [], [1, 'a'], {},
    { a: { b: [null] } }, { constructor: 1 }, randomUUID(), '2026-02-30', '9999-12-31T23:59:59Z',
    // Lone surrogates (JSON.stringify writes them as \ud800 escapes), in a value and in a key.
    '\ud800', 'a\udfffb', ['\ud800'], { '\udbff': 1 },
    // Keys and values that name an object's prototype; JSON.parse makes __proto__ an own key.
    JSON.parse('{"__proto__": {"polluted": true}}'), { prototype: 1, toString: 'x', valueOf: null, hasOwnProperty: [] },
    '__proto__', 'constructor', 'toString', 'custom.constructor', 'qualification.__proto__',
    // Deeper than the 32 levels a body may nest, with a NUL at the bottom.
    nested(40), { a: nested(40), b: '\u0000' },
  ];

  async function fuzz(targets: [method: string, path: string, fields: string[]][]): Promise<string[]> {
    const failures: string[] = [];
    for (const [method, path, fields] of targets) {
      for (const body of [[], [{}], ['\ud800'], { '\ud800': 1 }]) {
        const res = await call(method, path, body);
        if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status}`);
      }
      for (const field of fields) {
        for (const value of ODD_VALUES) {
          const res = await call(method, path, { [field]: value });
          if (res.status >= 500) failures.push(`${method} ${path} {${field}: ${JSON.stringify(value).slice(0, 40)}} → ${res.status}`);
        }
      }
    }
    return failures;
  }

  it('leads and lead settings', async function () {
    this.timeout(180_000);
    const lead = (await call('POST', '/leads', { lastName: 'Odd' })).body;
    const convertible = (await call('POST', '/leads', { lastName: 'Convertible', company: 'Odd Corp' })).body;
    const stage = (await call('GET', '/lead-settings/stages')).body[1];
    const taskStatus = (await call('GET', '/tasks/lookups/statuses')).body[2];
    const taskPriority = (await call('GET', '/tasks/lookups/priorities')).body[0];
    const oppPriority = (await call('GET', '/opportunity-settings/priorities')).body[3];
    const closeReason = (await call('GET', '/opportunity-settings/close-reasons')).body[0];
    const oppType = (await call('GET', '/opportunity-settings/types')).body[0];
    const forecastCategory = (await call('GET', '/opportunity-settings/forecast-categories')).body[0];
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
      // `notes` last: the first plain text converts the lead, and later calls only meet "already converted".
      ['POST', '/associations', ['sourceType', 'sourceId', 'targetType', 'targetId', 'label']],
      ['POST', `/leads/${convertible.id}/convert`, ['contactId', 'createAccount', 'accountName', 'createOpportunity', 'opportunityStageId', 'closeDate', 'notes']],
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
      ['POST', '/tasks/lookups/types', ['name', 'color', 'icon', 'position', 'description', 'defaultDurationMinutes']],
      ['POST', '/tasks/lookups/statuses', ['name', 'isDefault', 'isOpen', 'isCompleted']],
      ['POST', '/tasks/lookups/priorities', ['name', 'level', 'isDefault']],
      ['PUT', `/tasks/lookups/statuses/${taskStatus.id}`, ['name', 'color', 'isDefault', 'isCompleted', 'isActive']],
      ['PUT', `/tasks/lookups/priorities/${taskPriority.id}`, ['name', 'level', 'isDefault', 'position']],
      ['PUT', '/tasks/lookups/types/reorder', ['ids', 'typeIds']],
      ['PUT', '/tasks/lookups/statuses/reorder', ['ids', 'statusIds']],
      ['PUT', '/tasks/statuses/reorder', ['statusIds']],
      ['PUT', '/tasks/settings/general', ['value', 'defaultTaskType', 'maxSubtaskDepth']],
      ['PUT', '/tasks/settings/reminders', ['value', 'options']],
      ['PUT', `/tasks/settings/${'__proto__'}`, ['value']],
      ['POST', '/opportunity-settings/priorities', ['name', 'color', 'icon', 'sortOrder', 'isDefault']],
      ['PUT', `/opportunity-settings/priorities/${oppPriority.id}`, ['name', 'color', 'icon', 'isActive', 'isDefault']],
      ['DELETE', `/opportunity-settings/priorities/${oppPriority.id}`, []],
      ['POST', '/opportunity-settings/close-reasons', ['type', 'name', 'description', 'sortOrder']],
      ['PUT', `/opportunity-settings/close-reasons/${closeReason.id}`, ['name', 'description', 'sortOrder', 'isActive']],
      ['DELETE', `/opportunity-settings/close-reasons/${closeReason.id}`, []],
      ['POST', '/opportunity-settings/types', ['name', 'color', 'description', 'sortOrder']],
      ['PUT', `/opportunity-settings/types/${oppType.id}`, ['name', 'color', 'description', 'isActive']],
      ['DELETE', `/opportunity-settings/types/${oppType.id}`, []],
      ['POST', '/opportunity-settings/forecast-categories', ['name', 'probabilityMin', 'probabilityMax', 'color']],
      ['PUT', `/opportunity-settings/forecast-categories/${forecastCategory.id}`, ['probabilityMin', 'probabilityMax', 'isActive']],
      ['DELETE', `/opportunity-settings/forecast-categories/${forecastCategory.id}`, []],
    ]);
    for (const key of ['toString', 'valueOf', 'hasOwnProperty', 'constructor', '__proto__', 'custom.toString', 'qualification.valueOf']) {
      const stageFieldValues = JSON.parse(JSON.stringify({ [key]: 'x' }));
      const res = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stage.id, stageFieldValues });
      if (res.status >= 500) failures.push(`POST /leads/:id/change-stage {stageFieldValues: {${key}: "x"}} → ${res.status}`);
    }
    for (const query of ['page=abc', 'limit=-1', 'sortBy[]=a', 'sortBy=__proto__', 'sortBy[__proto__]=a', '__proto__[a]=1', 'search=%ED%A0%80', 'search[a]=1', 'stageId=1', 'priority=%00', 'view=kanban&limit=0', 'status[]=open', `search=${'%25'.repeat(300)}`]) {
      const res = await call('GET', `/leads?${query}`);
      if (res.status >= 500) failures.push(`GET /leads?${query} → ${res.status}`);
    }
    for (const query of ['dateFrom=x', 'dateFrom=99999999999999999', 'ownerId=1', 'pipelineId[]=1']) {
      const res = await call('GET', `/leads/sla/summary?${query}`);
      if (res.status >= 500) failures.push(`GET /leads/sla/summary?${query} → ${res.status}`);
    }
    for (const query of ['type=contacts&q=%ED%A0%80', 'type[]=a&q=ab', 'type=__proto__&q=ab', 'type=contacts&q[]=a', 'type=contacts&q=%00%00', `type=contacts&q=${'%25'.repeat(100)}`, 'type=contacts&limit=abc', 'type=leads&q=\\%25']) {
      const res = await call('GET', `/associations/search?${query}`);
      if (res.status >= 500) failures.push(`GET /associations/search?${query} → ${res.status}`);
    }
    for (const path of [`/associations/__proto__/${lead.id}`, `/associations/leads/${lead.id}`, '/associations/constructor/x', '/associations/%ED%A0%80/x']) {
      const res = await call('GET', path);
      if (res.status >= 500) failures.push(`GET ${path} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('contacts, accounts, users and the organisation', async function () {
    this.timeout(180_000);
    const contact = (await call('POST', '/contacts', { lastName: 'Odd' })).body;
    const account = (await call('POST', '/accounts', { name: 'Odd Co' })).body;
    const category = (await call('POST', '/products/categories', { name: 'Odd category' })).body;
    const product = (await call('POST', '/products', { name: 'Odd product' })).body;
    const book = (await call('POST', '/products/price-books', { name: 'Odd book' })).body;
    const entry = (await call('POST', `/products/price-books/${book.id}/entries`, { productId: product.id })).body;
    const failures = await fuzz([
      ['POST', '/products/price-books', ['name', 'description', 'currency', 'isActive', 'isDefault']],
      ['PUT', `/products/price-books/${book.id}`, ['name', 'currency', 'isActive', 'isDefault']],
      ['POST', `/products/price-books/${book.id}/entries`, ['productId', 'unitPrice', 'minimumQuantity', 'maximumQuantity', 'discount', 'discountType']],
      ['PUT', `/products/price-books/${book.id}/entries/${entry.id}`, ['unitPrice', 'minimumQuantity', 'maximumQuantity', 'discount', 'discountType']],
      ['POST', `/products/${product.id}/bundle-items`, ['productId', 'quantity', 'isOptional']],
      ['POST', '/products', ['name', 'code', 'categoryId', 'type', 'unitPrice', 'currency', 'taxRate', 'customFields']],
      ['PUT', `/products/${product.id}`, ['name', 'code', 'categoryId', 'unitPrice', 'isActive']],
      ['POST', '/products/categories', ['name', 'description']],
      ['PUT', `/products/categories/${category.id}`, ['name', 'description']],
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
      ['POST', '/auth/register', ['email', 'password', 'companyName', 'firstName', 'lastName']],
      ['POST', '/auth/login', ['tenantSlug', 'email', 'password']],
      ['POST', '/auth/refresh', ['refreshToken']],
      ['POST', '/auth/forgot-password', ['email', 'tenantSlug']],
      ['POST', '/auth/reset-password', ['token', 'password']],
      ['POST', '/auth/change-password', ['currentPassword', 'newPassword']],
    ]);
    for (const path of ['/auth/invite/validate', '/auth/reset-password/validate']) {
      for (const query of ['token=%ED%A0%80', 'token[]=a', 'token[__proto__]=a', 'token=%00', `token=${'x'.repeat(5_000)}`]) {
        const res = await service.request('GET', `/api${path}?${query}`);
        if (res.status >= 500) failures.push(`GET ${path}?${query} → ${res.status}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('tasks', async () => {
    const task = (await call('POST', '/tasks', { title: 'Odd task' })).body;
    const failures = await fuzz([
      ['POST', '/tasks', ['title', 'description', 'typeId', 'statusId', 'priorityId', 'assignedTo', 'dueDate', 'reminderAt', 'entityType', 'entityId', 'parentTaskId']],
      ['PUT', `/tasks/${task.id}`, ['title', 'statusId', 'priorityId', 'assignedTo', 'dueDate', 'entityType', 'entityId']],
      ['POST', `/tasks/${task.id}/complete`, ['completionNotes']],
      ['POST', `/tasks/${task.id}/reopen`, ['statusId']],
      ['POST', `/tasks/${task.id}/subtasks`, ['title', 'dueDate', 'entityType']],
      ['POST', `/tasks/${task.id}/notes`, ['content']],
    ]);
    for (const query of ['overdue=1', 'dueBefore=x', 'dueAfter[]=1', 'entityType=__proto__', 'limit=1e9', 'parentTaskId=1', 'search=%00']) {
      const res = await call('GET', `/tasks?${query}`);
      if (res.status >= 500) failures.push(`GET /tasks?${query} → ${res.status}`);
    }
    for (const query of ['days=1e9', 'limit=x', 'days[]=1']) {
      const res = await call('GET', `/tasks/dashboard/upcoming?${query}`);
      if (res.status >= 500) failures.push(`GET /tasks/dashboard/upcoming?${query} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('opportunity contact roles, line items and team', async () => {
    const account = (await call('POST', '/accounts', { name: 'Odd lines' })).body;
    const lined = (await call('POST', '/opportunities', { name: 'Lined deal', accountId: account.id })).body;
    const contact = (await call('POST', '/contacts', { lastName: 'Odd buyer' })).body;
    await call('POST', `/opportunities/${lined.id}/contacts`, { contactId: contact.id, role: 'decision_maker' });
    const product = (await call('POST', '/products', { name: 'Odd seat', unitPrice: 10 })).body;
    const [line] = (await call('POST', `/opportunities/${lined.id}/line-items`, { productId: product.id })).body;
    await call('POST', `/opportunities/${lined.id}/team`, { userId: admin.user.id });
    const failures = await fuzz([
      ['POST', `/opportunities/${lined.id}/contacts`, ['contactId', 'role', 'isPrimary', 'notes']],
      ['DELETE', `/opportunities/${lined.id}/contacts/${contact.id}`, []],
      ['POST', `/opportunities/${lined.id}/line-items`, ['productId', 'quantity', 'unitPrice', 'discount', 'discountType', 'description']],
      ['PUT', `/opportunities/${lined.id}/line-items/${line.id}`, ['quantity', 'unitPrice', 'discount', 'discountType', 'description']],
      ['DELETE', `/opportunities/${lined.id}/line-items/${line.id}`, []],
      ['POST', `/opportunities/${lined.id}/team`, ['userId', 'role']],
      ['DELETE', `/opportunities/${lined.id}/team/${admin.user.id}`, []],
    ]);
    expect(failures).to.deep.equal([]);
  });

  it('time entries and the timer', async () => {
    const contact = (await call('POST', '/contacts', { lastName: 'Odd hours' })).body;
    const logged = { entityType: 'contacts', entityId: contact.id, minutes: 30 };
    const entry = (await call('POST', '/time-entries', logged)).body;
    const failures = await fuzz([
      ['POST', '/time-entries', ['entityType', 'entityId', 'minutes', 'loggedAt', 'description', 'taskId', 'isBillable', 'hourlyRate', 'currency']],
      ['PUT', `/time-entries/${entry.id}`, ['minutes', 'loggedAt', 'description', 'taskId', 'isBillable', 'hourlyRate', 'currency']],
      ['DELETE', `/time-entries/${entry.id}`, []],
      ['POST', '/time-entries/timer/start', ['entityType', 'entityId', 'taskId', 'description']],
      ['POST', '/time-entries/timer/stop', ['minutes', 'description', 'isBillable']],
      ['DELETE', '/time-entries/timer', []],
    ]);
    // Each odd value beside otherwise valid fields, so it reaches the record lookups, the decider and the read model.
    const fresh = (await call('POST', '/time-entries', logged)).body;
    for (const [method, path, base, fields] of [
      ['POST', '/time-entries', logged, ['entityType', 'entityId', 'minutes', 'loggedAt', 'taskId', 'hourlyRate', 'currency']],
      ['PUT', `/time-entries/${fresh.id}`, { minutes: 20 }, ['loggedAt', 'taskId', 'hourlyRate', 'currency']],
      ['POST', '/time-entries/timer/start', { entityType: 'contacts', entityId: contact.id }, ['entityType', 'entityId', 'taskId']],
    ] as const) {
      for (const field of fields) {
        for (const value of ODD_VALUES) {
          const res = await call(method, path, { ...base, [field]: value });
          if (res.status >= 500) failures.push(`${method} ${path} {…, ${field}: ${JSON.stringify(value).slice(0, 40)}} → ${res.status}`);
        }
      }
    }
    for (const query of ['entityType=__proto__&entityId=1', `entityType=constructor&entityId=${contact.id}`, 'from=x', 'to[]=1', 'limit=1e9', 'page=-1', 'userId=%00', 'from=99999-01-01']) {
      for (const path of ['/time-entries', '/time-entries/summary']) {
        const res = await call('GET', `${path}?${query}`);
        if (res.status >= 500) failures.push(`GET ${path}?${query} → ${res.status}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('web push and provider verification', async () => {
    const subscription = {
      endpoint: 'https://push.example.com/send/odd',
      keys: { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url'), auth: Buffer.alloc(16, 2).toString('base64url') },
    };
    const failures = await fuzz([
      ['POST', '/notifications/push/subscribe', ['endpoint', 'keys', 'expirationTime']],
      ['POST', '/notifications/push/unsubscribe', ['endpoint']],
      ['DELETE', '/notifications/push/unsubscribe', ['endpoint']],
      ['POST', '/notifications/admin/generate-vapid', []],
      ['POST', '/notifications/admin/verify/smtp', ['testEmail']],
      ['POST', '/notifications/admin/verify/smsprovider', ['testPhone']],
    ]);
    expect((await call('POST', '/notifications/push/subscribe', subscription)).status).to.equal(201);
    // Each odd value beside otherwise valid fields, so it reaches the decider and the tables.
    for (const field of ['endpoint', 'keys', 'expirationTime']) {
      for (const value of ODD_VALUES) {
        const res = await call('POST', '/notifications/push/subscribe', { ...subscription, [field]: value });
        if (res.status >= 500) failures.push(`POST /notifications/push/subscribe {…, ${field}: ${JSON.stringify(value).slice(0, 40)}} → ${res.status}`);
      }
    }
    for (const query of ['endpoint=%00', 'endpoint[]=1', 'endpoint=__proto__', `endpoint=${encodeURIComponent(subscription.endpoint)}`]) {
      const res = await call('DELETE', `/notifications/push/unsubscribe?${query}`);
      if (res.status >= 500) failures.push(`DELETE /notifications/push/unsubscribe?${query} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('opportunities', async () => {
    const account = (await call('POST', '/accounts', { name: 'Odd deals' })).body;
    const stage = (await call('GET', '/lead-settings/stages?module=opportunities')).body[1];
    const deal = (await call('POST', '/opportunities', { name: 'Odd deal', accountId: account.id })).body;
    const closed = (await call('POST', '/opportunities', { name: 'Closed deal', accountId: account.id })).body;
    await call('POST', `/opportunities/${closed.id}/close-lost`, {});
    const failures = await fuzz([
      ['POST', '/opportunities', ['name', 'accountId', 'pipelineId', 'stageId', 'amount', 'probability', 'expectedCloseDate', 'priority', 'type', 'customFields', 'ownerId']],
      ['PUT', `/opportunities/${deal.id}`, ['name', 'accountId', 'amount', 'probability', 'expectedCloseDate', 'priority', 'type', 'customFields']],
      ['POST', `/opportunities/${deal.id}/change-stage`, ['stageId', 'stageFieldValues', 'unlockReason']],
      ['POST', `/opportunities/${deal.id}/close-won`, ['closeDate', 'finalAmount', 'notes']],
      ['POST', `/opportunities/${deal.id}/close-lost`, ['closeReasonId', 'competitorName', 'notes']],
      ['POST', `/opportunities/${closed.id}/reopen`, ['stageId', 'reason']],
      ['POST', `/opportunities/${deal.id}/notes`, ['content']],
      ['POST', '/opportunities/check-duplicates', ['name', 'accountId', 'excludeId']],
    ]);
    for (const key of ['toString', 'valueOf', 'hasOwnProperty', 'constructor', '__proto__', 'custom.toString', 'customFields.__proto__']) {
      const stageFieldValues = JSON.parse(JSON.stringify({ [key]: 'x' }));
      const res = await call('POST', `/opportunities/${deal.id}/change-stage`, { stageId: stage.id, stageFieldValues });
      if (res.status >= 500) failures.push(`POST /opportunities/:id/change-stage {stageFieldValues: {${key}: "x"}} → ${res.status}`);
    }
    for (const query of ['name[]=a', 'name=%25%5C_', 'accountId=__proto__']) {
      const res = await call('GET', `/opportunities/check-duplicates?${query}`);
      if (res.status >= 500) failures.push(`GET /opportunities/check-duplicates?${query} → ${res.status}`);
    }
    for (const query of ['minAmount=x', 'maxAmount[]=1', 'expectedCloseBefore=x', 'priority=%00', 'type[]=a', 'sortBy[]=a', 'limit=1e9', 'search=%ED%A0%80', 'stageId=1', 'state=__proto__']) {
      const res = await call('GET', `/opportunities?${query}`);
      if (res.status >= 500) failures.push(`GET /opportunities?${query} → ${res.status}`);
    }
    for (const query of ['quarter=__proto__', 'quarter[]=Q1', 'quarter=%00', 'year=1e9', 'year=-1', 'year[a]=1', 'year=%ED%A0%80', 'pipelineId=__proto__', 'pipelineId[]=1', `pipelineId=${'f'.repeat(5_000)}`]) {
      const res = await call('GET', `/opportunities/forecast?${query}`);
      if (res.status >= 500) failures.push(`GET /opportunities/forecast?${query} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it("opportunity settings at the reference's paths (/opportunities/priorities…)", async () => {
    const aliasItems: Record<string, { id: string }> = {};
    for (const path of ['priorities', 'close-reasons', 'types', 'forecast-categories']) aliasItems[path] = (await call('GET', `/opportunities/${path}`)).body[1];
    const failures = await fuzz([
      ['POST', '/opportunities/priorities', ['name', 'color', 'icon', 'sortOrder', 'isDefault']],
      ['PUT', `/opportunities/priorities/${aliasItems.priorities.id}`, ['name', 'color', 'icon', 'isActive', 'isDefault']],
      ['DELETE', `/opportunities/priorities/${aliasItems.priorities.id}`, []],
      ['POST', '/opportunities/close-reasons', ['type', 'name', 'description', 'sortOrder']],
      ['PUT', `/opportunities/close-reasons/${aliasItems['close-reasons'].id}`, ['name', 'description', 'sortOrder', 'isActive']],
      ['DELETE', `/opportunities/close-reasons/${aliasItems['close-reasons'].id}`, []],
      ['POST', '/opportunities/types', ['name', 'color', 'description', 'sortOrder']],
      ['PUT', `/opportunities/types/${aliasItems.types.id}`, ['name', 'color', 'description', 'isActive']],
      ['DELETE', `/opportunities/types/${aliasItems.types.id}`, []],
      ['POST', '/opportunities/forecast-categories', ['name', 'probabilityMin', 'probabilityMax', 'color']],
      ['PUT', `/opportunities/forecast-categories/${aliasItems['forecast-categories'].id}`, ['probabilityMin', 'probabilityMax', 'isActive']],
      ['DELETE', `/opportunities/forecast-categories/${aliasItems['forecast-categories'].id}`, []],
    ]);
    expect(failures).to.deep.equal([]);
  });

  it('uploads: JSON bodies and odd multipart forms', async () => {
    const contact = (await call('POST', '/contacts', { lastName: 'Odd upload' })).body.id;
    const doc = await sendMultipart(service.url, `/api/upload/document/contacts/${contact}`, [{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }], admin.auth);
    expect(doc.status).to.equal(201);
    // The JSON fuzz: an upload endpoint takes multipart only (415), never a 500.
    const failures = await fuzz([
      ['POST', `/upload/document/contacts/${contact}`, ['file', 'visibility']],
      ['DELETE', `/upload/document/contacts/${contact}/${doc.body.id}`, ['visibility']],
      ['POST', `/upload/avatar/contacts/${contact}`, ['file']],
      ['POST', '/upload/logo', ['file']],
    ]);
    // Odd values in every part of a form: names, types, visibility, extra and repeated parts.
    const oddText = ['', ' ', '..', '../..', '__proto__', 'constructor', '😀.pdf', 'a'.repeat(2_000), "'; drop table record_documents; --", '%00.pdf', '\\server\\share.pdf'];
    const targets = [`/upload/document/contacts/${contact}`, `/upload/avatar/contacts/${contact}`, '/upload/logo', `/upload/document/__proto__/${contact}`, `/upload/avatar/users/${contact}`];
    for (const target of targets) {
      for (const value of oddText) {
        const forms: Part[][] = [
          [{ name: 'file', filename: value, contentType: 'application/pdf', content: MAGIC.pdf }],
          [{ name: 'file', filename: 'a.pdf', contentType: value, content: MAGIC.pdf }],
          [{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }, { name: 'visibility', value }],
          [{ name: value || 'x', value }, { name: 'file', filename: 'b.png', contentType: 'image/png', content: MAGIC.png }, { name: 'file', filename: 'c.png', contentType: 'image/png', content: value }],
        ];
        for (const form of forms) {
          const res = await sendMultipart(service.url, `/api${target}`, form, admin.auth);
          if (res.status >= 500) failures.push(`POST ${target} ${JSON.stringify(form).slice(0, 120)} → ${res.status}`);
        }
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('work request settings', async () => {
    const pipeline = (await call('POST', '/work-request-settings/pipelines', { name: 'Odd settings flow' })).body;
    const stage = (await call('POST', '/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Open' })).body;
    const type = (await call('POST', '/work-request-settings/types', { name: 'Odd settings type', pipelineId: pipeline.id })).body;
    const failures = await fuzz([
      ['POST', '/work-request-settings/types', ['name', 'requestFields', 'defaultDueDays', 'teamId', 'departmentId', 'allowedRecordTypes', 'assignmentMode', 'defaultAssigneeId', 'pipelineId', 'isBillable', 'hourlyRate', 'currency']],
      ['PUT', `/work-request-settings/types/${type.id}`, ['name', 'requestFields', 'teamId', 'assignmentMode', 'pipelineId', 'hourlyRate', 'isActive']],
      ['POST', '/work-request-settings/pipelines', ['name', 'description', 'isSequential', 'sortOrder']],
      ['PUT', `/work-request-settings/pipelines/${pipeline.id}`, ['name', 'isSequential', 'isActive']],
      ['POST', '/work-request-settings/stages', ['pipelineId', 'name', 'color', 'isWon', 'isLost', 'ownerUserId']],
      ['PUT', `/work-request-settings/stages/${stage.id}`, ['name', 'isWon', 'isLost', 'ownerUserId', 'isActive', 'pipelineId']],
    ]);
    expect(failures).to.deep.equal([]);
  });

  it('work requests', async () => {
    const pipeline = (await call('POST', '/work-request-settings/pipelines', { name: 'Odd flow' })).body;
    await call('POST', '/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Open' });
    await call('POST', '/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Next' });
    const team = (await call('POST', '/teams', { name: 'Odd team', memberIds: [admin.user.id] })).body;
    const type = (await call('POST', '/work-request-settings/types', {
      name: 'Odd type', pipelineId: pipeline.id, teamId: team.id, requestFields: [{ key: 'brief', label: 'Brief', type: 'text', required: true }],
    })).body;
    const raise = async () => (await call('POST', '/work-requests', { typeId: type.id, title: 'Odd', requestData: { brief: 'x' } })).body;
    const [open, working, closed, doomed] = [await raise(), await raise(), await raise(), await raise()];
    await call('POST', `/work-requests/${working.id}/accept`, {});
    await call('POST', `/work-requests/${closed.id}/cancel`, {});
    const failures = await fuzz([
      ['POST', '/work-requests', ['typeId', 'title', 'description', 'entityType', 'entityId', 'priority', 'dueDate', 'estimatedMinutes', 'requestData', 'associations', 'assignedTo', 'tags', 'customFields', 'isBillable', 'hourlyRate', 'currency', 'pipelineId', 'teamId']],
      ['PUT', `/work-requests/${open.id}`, ['title', 'description', 'priority', 'dueDate', 'estimatedMinutes', 'requestData', 'customFields', 'tags', 'isBillable', 'hourlyRate', 'currency']],
      ['POST', `/work-requests/${open.id}/accept`, []],
      ['POST', `/work-requests/${open.id}/assign`, ['userId', 'note']],
      ['POST', `/work-requests/${working.id}/release`, ['reason']],
      ['POST', `/work-requests/${open.id}/decline`, ['reason']],
      ['POST', `/work-requests/${working.id}/start`, []],
      ['POST', `/work-requests/${working.id}/complete`, ['note']],
      ['POST', `/work-requests/${open.id}/cancel`, ['reason']],
      ['POST', `/work-requests/${closed.id}/reopen`, ['note']],
      ['POST', `/work-requests/${working.id}/change-stage`, ['stageId', 'note', 'assignmentMode', 'assignToUserId', 'assignToTeamId']],
      ['POST', `/work-requests/${open.id}/notes`, ['content']],
      ['DELETE', `/work-requests/${doomed.id}`, []],
    ]);
    for (const query of ['status=__proto__', 'status[]=open', 'assignedTo=x', 'search=%ED%A0%80', 'sortBy=constructor', 'limit=1e9', 'overdue=1', 'view[]=all', 'entityType=toString']) {
      const res = await call('GET', `/work-requests?${query}`);
      if (res.status >= 500) failures.push(`GET /work-requests?${query} → ${res.status}`);
    }
    for (const path of ['/by-entity/__proto__/x', `/by-entity/constructor/${open.id}`, `/by-entity/leads/${open.id}`]) {
      const res = await call('GET', `/work-requests${path}`);
      if (res.status >= 500) failures.push(`GET /work-requests${path} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('workflows', async function () {
    this.timeout(180_000);
    const valid = { name: 'Odd flow', triggerModule: 'leads', triggerType: 'lead_updated' };
    const wf = (await call('POST', '/workflows', { ...valid, actions: [{ actionType: 'add_tag', config: { tag: 'x' } }] })).body;
    const doomed = (await call('POST', '/workflows', valid)).body;
    const failures = await fuzz([
      ['POST', '/workflows', ['name', 'description', 'triggerModule', 'triggerType', 'triggerFilters', 'actions', 'isActive']],
      ['PUT', `/workflows/${wf.id}`, ['name', 'triggerModule', 'triggerType', 'triggerFilters', 'actions', 'isActive']],
      ['PATCH', `/workflows/${wf.id}/toggle`, ['isActive']],
      ['DELETE', `/workflows/${doomed.id}`, []],
    ]);
    // Odd values inside filters and actions, beside otherwise valid fields.
    const actionShapes = (value: unknown) => [
      [{ actionType: 'add_tag', config: value }],
      [{ actionType: 'branch', config: { condition: value } }],
      [{ actionType: 'webhook', config: { url: value } }],
      [{ actionType: 'assign_owner', config: { pool: value } }],
      [{ actionType: 'add_tag', config: { tag: 'x' }, parentActionId: value, branch: 'yes' }],
      [{ id: value, actionType: 'add_tag', config: { tag: 'x' } }],
    ];
    for (const value of ODD_VALUES) {
      for (const body of [
        { ...valid, triggerFilters: { logic: 'AND', conditions: [{ field: value, operator: 'equals', value }] } },
        { ...valid, triggerFilters: { match: value, items: [value] } },
        ...actionShapes(value).map((actions) => ({ ...valid, actions })),
      ]) {
        const res = await call('POST', '/workflows', body);
        if (res.status >= 500) failures.push(`POST /workflows ${JSON.stringify(body).slice(0, 120)} → ${res.status}`);
      }
    }
    for (const query of ['module=__proto__', 'isActive=maybe', 'page=0', 'limit=1e9', 'search[a]=1', 'module[]=leads']) {
      const res = await call('GET', `/workflows?${query}`);
      if (res.status >= 500) failures.push(`GET /workflows?${query} → ${res.status}`);
    }
    for (const query of ['status=__proto__', 'entityId=x', 'limit=-1']) {
      const res = await call('GET', `/workflows/${wf.id}/runs?${query}`);
      if (res.status >= 500) failures.push(`GET /workflows/:id/runs?${query} → ${res.status}`);
    }
    for (const path of ['/workflows/runs/constructor', '/workflows/__proto__', '/workflows/runs/__proto__', `/workflows/${randomUUID()}/runs`]) {
      const res = await call('GET', path);
      if (res.status !== 404) failures.push(`GET ${path} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('reports, folders and schedules', async function () {
    this.timeout(180_000);
    const definition = { name: 'Odd report', dataSource: 'opportunities', columns: [{ field: 'name' }, { field: 'amount', aggregate: 'sum' }], groupBy: ['name'] };
    const report = (await call('POST', '/reports', definition)).body;
    const folder = (await call('POST', '/reports/folders', { name: 'Odd folder' })).body;
    const schedule = (await call('POST', `/reports/${report.id}/schedules`, { frequency: 'daily', recipients: ['odd@example.com'] })).body;
    const failures = await fuzz([
      ['POST', '/reports', ['name', 'description', 'folderId', 'dataSource', 'chartType', 'columns', 'filters', 'groupBy', 'orderBy', 'isPublic']],
      ['PUT', `/reports/${report.id}`, ['name', 'folderId', 'dataSource', 'columns', 'filters', 'groupBy', 'orderBy', 'isPublic']],
      ['POST', `/reports/${report.id}/clone`, ['name', 'folderId']],
      ['POST', `/reports/${report.id}/execute`, ['filters', 'limit']],
      ['POST', `/reports/${report.id}/export`, ['format', 'filters']],
      ['POST', '/reports/folders', ['name']],
      ['PUT', `/reports/folders/${folder.id}`, ['name']],
      ['POST', `/reports/${report.id}/schedules`, ['frequency', 'dayOfWeek', 'dayOfMonth', 'time', 'timeZone', 'recipients', 'format', 'isActive']],
      ['PUT', `/reports/${report.id}/schedules/${schedule.id}`, ['frequency', 'dayOfWeek', 'dayOfMonth', 'time', 'timeZone', 'recipients', 'format', 'isActive']],
      ['DELETE', `/reports/${report.id}/schedules/${schedule.id}`, []],
      ['DELETE', `/reports/folders/${folder.id}`, []],
    ]);
    // Odd values inside otherwise valid definitions: a column, a filter's value and operator, a grouping, an order, a date range.
    for (const value of ODD_VALUES) {
      for (const body of [
        { ...definition, columns: [{ field: value }] },
        { ...definition, columns: [{ field: 'amount', aggregate: value }] },
        { ...definition, filters: [{ field: 'amount', operator: 'between', value }] },
        { ...definition, filters: [{ field: 'created_at', operator: 'relative_date', value }] },
        { ...definition, filters: [{ field: 'name', operator: value, value: 'x' }] },
        { ...definition, filters: [{ field: 'close_date', operator: 'in', value: [value] }] },
        { ...definition, groupBy: [value] },
        { ...definition, orderBy: { field: value, direction: 'desc' } },
      ]) {
        const res = await call('POST', '/reports', body);
        if (res.status >= 500) failures.push(`POST /reports ${JSON.stringify(body).slice(0, 120)} → ${res.status}`);
      }
      const run = await call('POST', `/reports/${report.id}/execute`, { filters: { dateRange: { from: value, to: value } } });
      if (run.status >= 500) failures.push(`POST execute dateRange ${JSON.stringify(value).slice(0, 40)} → ${run.status}`);
    }
    for (const query of ['folderId=__proto__', 'search=%25_%5C', 'limit=1e9', 'page=-1', 'search[]=1']) {
      const res = await call('GET', `/reports?${query}`);
      if (res.status >= 500) failures.push(`GET /reports?${query} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('forms and their public submit', async () => {
    const fields = [
      { type: 'text', name: 'last', label: 'Last', required: true }, { type: 'email', name: 'email', label: 'Email' }, { type: 'phone', name: 'phone', label: 'Phone' },
      { type: 'number', name: 'seats', label: 'Seats' }, { type: 'date', name: 'start', label: 'Start' }, { type: 'textarea', name: 'notes', label: 'Notes' },
      { type: 'select', name: 'plan', label: 'Plan', options: [{ label: 'Pro', value: 'pro' }] }, { type: 'radio', name: 'size', label: 'Size', options: [{ label: 'S', value: 's' }] },
      { type: 'checkbox', name: 'topics', label: 'Topics', options: [{ label: 'A', value: 'a' }] }, { type: 'checkbox', name: 'agree', label: 'Agree' }, { type: 'file', name: 'cv', label: 'CV' },
    ];
    const form = (await call('POST', '/forms', {
      name: 'Odd form', status: 'active', fields,
      submitActions: [
        { type: 'create_lead', fieldMapping: { lastName: 'last', email: 'email', phone: 'phone', estimatedValue: 'seats', 'customFields.plan': 'plan' } },
        { type: 'create_contact', fieldMapping: { lastName: 'last', description: 'notes' } },
        { type: 'send_email', emailFieldName: 'email', subject: 'Hi {{last}}', body: '{{notes}}' },
      ],
    })).body;
    const doomed = (await call('POST', '/forms', { name: 'Doomed form' })).body;
    const submitPath = `/forms/public/${admin.tenant.slug}/${form.token}/submit`;
    const submitted = (await call('POST', submitPath, { last: 'Odd', email: 'odd@example.com' })).body;
    expect(submitted.success).to.equal(true);
    const failures = await fuzz([
      ['POST', '/forms', ['name', 'description', 'status', 'type', 'fields', 'settings', 'submitActions', 'branding', 'token']],
      ['PUT', `/forms/${doomed.id}`, ['name', 'description', 'status', 'type', 'fields', 'settings', 'submitActions', 'branding']],
      ['POST', `/forms/${form.id}/duplicate`, ['name']],
      ['POST', `/forms/${form.id}/submissions/${submitted.submissionId}/retry-webhook`, ['index']],
      ['POST', submitPath, [...fields.map((f) => f.name), '__captchaToken', '__recaptchaToken', '__hp', 'cf_extra']],
      ['DELETE', `/forms/${doomed.id}`, []],
    ]);
    for (const path of ['/forms?status=__proto__', '/forms?search=%ED%A0%80', `/forms/${form.id}/submissions?dateFrom=x`, `/forms/${form.id}/submissions?status[]=a`, `/forms/public/${admin.tenant.slug}/%ED%A0%80`, '/forms/public/__proto__/constructor']) {
      const res = await call('GET', path);
      if (res.status >= 500) failures.push(`GET ${path} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('webhook subscriptions', async () => {
    // A private address: deliveries are refused at once, nothing leaves the machine.
    const hook = (await call('POST', '/webhooks', { url: 'http://10.0.0.1/hook', eventTypes: ['LeadCreated'] })).body;
    const doomed = (await call('POST', '/webhooks', { url: 'http://10.0.0.1/doomed', eventTypes: ['*'], active: false })).body;
    await call('POST', '/leads', { lastName: 'Hooked' });
    let delivery: { id: string } | undefined;
    for (let tries = 0; !delivery && tries < 100; tries++) {
      delivery = (await call('GET', `/webhooks/${hook.id}/deliveries`)).body.data[0];
      if (!delivery) await new Promise((r) => setTimeout(r, 100));
    }
    expect(delivery, 'the lead made a delivery').to.not.equal(undefined);
    const failures = await fuzz([
      ['POST', '/webhooks', ['url', 'eventTypes', 'description', 'active']],
      ['PUT', `/webhooks/${hook.id}`, ['url', 'eventTypes', 'description', 'active']],
      ['POST', `/webhooks/${hook.id}/rotate-secret`, ['secret']],
      ['POST', `/webhooks/deliveries/${delivery!.id}/retry`, ['force']],
      ['DELETE', `/webhooks/${doomed.id}`, []],
    ]);
    for (const path of ['/webhooks?page=-1', '/webhooks?limit=1e9', `/webhooks/${hook.id}/deliveries?status=__proto__`, `/webhooks/${hook.id}/deliveries?status[]=failed`, '/webhooks/%ED%A0%80']) {
      const res = await call('GET', path);
      if (res.status >= 500) failures.push(`GET ${path} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('notifications', async () => {
    const sent = (await call('POST', '/notifications/admin/test', { userId: admin.user.id, title: 'Odd', message: 'x' })).body;
    const doomed = (await call('POST', '/notifications/admin/test', { userId: admin.user.id, title: 'Doomed', message: 'x' })).body;
    const template = (await call('GET', '/notifications/admin/templates')).body[0];
    const failures = await fuzz([
      ['PUT', `/notifications/${sent.notificationId}/read`, []],
      ['PUT', '/notifications/read-all', []],
      ['DELETE', `/notifications/${doomed.notificationId}/dismiss`, []],
      ['PUT', `/notifications/${doomed.notificationId}/dismiss`, []],
      ['PUT', '/notifications/preferences/task_due', ['channels', 'inApp', 'email', 'push', 'browserPush', 'sms']],
      ['PUT', '/notifications/preferences/__proto__', ['channels', 'email']],
      ['PUT', '/notifications/preferences/bulk', ['preferences']],
      ['PUT', '/notifications/preferences', ['preferences']],
      ['PUT', '/notifications/preferences/time-zone', ['timeZone']],
      ['PUT', `/notifications/admin/templates/${template.id}`, ['subject', 'body', 'isActive']],
      ['PUT', '/notifications/admin/settings', ['emailEnabled', 'pushEnabled', 'smsEnabled', 'digestFrequency', 'digestTime', 'quietHoursEnabled', 'quietHoursStart', 'quietHoursEnd', 'timeZone']],
      ['POST', '/notifications/admin/test', ['userId', 'title', 'message']],
    ]);
    for (const preferences of [[{ event: 'mention', channels: null }], [{ event: '__proto__' }], [{ eventType: 'constructor', inApp: true }], [null], ['x']]) {
      const res = await call('PUT', '/notifications/preferences/bulk', { preferences });
      if (res.status >= 500) failures.push(`PUT /notifications/preferences/bulk ${JSON.stringify(preferences)} → ${res.status}`);
    }
    for (const query of ['unreadOnly=1', 'limit=1e9', 'page=-1', 'type[]=x', 'type=%ED%A0%80', 'status=__proto__']) {
      for (const path of ['/notifications', '/notifications/admin/deliveries']) {
        const res = await call('GET', `${path}?${query}`);
        if (res.status >= 500) failures.push(`GET ${path}?${query} → ${res.status}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('dashboard targets, share tokens and figures', async () => {
    const target = (await call('POST', '/dashboard/targets', { name: 'Odd', metric: 'deals_won', targetValue: 3, period: '2026-Q1' })).body;
    const doomed = (await call('POST', '/dashboard/targets', { name: 'Doomed', metric: 'revenue_won', targetValue: 3, period: '2026-Q2' })).body;
    const share = (await call('POST', '/dashboard/share', { scope: 'own' })).body;
    const targetFields = ['name', 'metric', 'targetValue', 'unit', 'period', 'userId', 'teamId'];
    const failures = await fuzz([
      ['POST', '/dashboard/targets', targetFields],
      ['PUT', `/dashboard/targets/${target.id}`, targetFields],
      ['DELETE', `/dashboard/targets/${doomed.id}`, []],
      ['POST', '/dashboard/share', ['scope', 'pipelineId']],
      ['DELETE', `/dashboard/share/${share.id}`, []],
    ]);
    const figures = ['stats', 'lead-pipeline', 'opportunity-pipeline', 'revenue-trend', 'top-performers', 'recent-activities', 'upcoming-tasks', 'target-progress', 'score-card', 'deal-velocity', 'targets'];
    for (const figure of figures) {
      for (const query of ['scope=__proto__', 'scope[]=all', 'from=0001-01-01', 'to=9999-12-31', 'asOf=%00', 'pipelineId=toString', 'metricKey=constructor', 'metrics=,,', 'limit=1e9', 'days=abc', 'quarter=__proto__', 'period[a]=1']) {
        const res = await call('GET', `/dashboard/${figure}?${query}`);
        if (res.status >= 500) failures.push(`GET /dashboard/${figure}?${query} → ${res.status}`);
      }
    }
    for (const token of ['%00', 'a'.repeat(500), '__proto__', '..%2F..']) {
      const res = await service.request('GET', `/api/dashboard/public/${token}`);
      if (res.status !== 404) failures.push(`GET /dashboard/public/${token.slice(0, 20)} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('API keys', async () => {
    const role = (await call('GET', '/roles')).body[0];
    const key = (await call('POST', '/api-keys', { name: 'Odd', roleId: role.id })).body;
    const doomed = (await call('POST', '/api-keys', { name: 'Doomed', roleId: role.id })).body;
    const failures = await fuzz([
      ['POST', '/api-keys', ['name', 'roleId', 'expiresAt']],
      ['POST', `/api-keys/${key.id}/revoke`, []],
      ['DELETE', `/api-keys/${doomed.id}`, []],
    ]);
    for (const query of ['status=__proto__', 'status[]=active', 'page=abc', 'limit=1e9']) {
      const res = await call('GET', `/api-keys?${query}`);
      if (res.status >= 500) failures.push(`GET /api-keys?${query} → ${res.status}`);
    }
    for (const odd of ['crm_', `crm_${key.id}_${'%00'.repeat(15)}`, `crm_${key.id}_${'+/'.repeat(22)}`, `crm_${key.id}_${'a'.repeat(5000)}`]) {
      const res = await service.request('GET', '/api/contacts', undefined, { authorization: `Bearer ${odd}` });
      if (res.status !== 401) failures.push(`Bearer ${odd.slice(0, 50)} → ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('customisation: custom fields, tabs, groups, layouts, form settings, list preferences, company, industries', async function () {
    this.timeout(180_000);
    const field = (await call('POST', '/admin/custom-fields', { module: 'leads', fieldKey: 'odd_tier', fieldLabel: 'Tier', fieldType: 'select', fieldOptions: ['a'] })).body;
    const tab = (await call('POST', '/admin/tabs', { module: 'leads', name: 'Odd tab' })).body;
    const group = (await call('POST', '/admin/groups', { module: 'leads', name: 'Odd group' })).body;
    const industry = (await call('POST', '/admin/industries', { name: 'Odd industry' })).body;
    const fieldSettings = [
      'module', 'fieldKey', 'fieldLabel', 'fieldType', 'isRequired', 'defaultValue', 'fieldOptions', 'validationRules', 'lookupModule', 'placeholder', 'helpText',
      'displayOrder', 'groupId', 'tabId', 'section', 'columnSpan', 'includeInCompletion', 'completionWeight', 'isActive', 'dependsOnFieldId', 'conditionalOptions',
    ];
    const failures = await fuzz([
      ['POST', '/admin/custom-fields', fieldSettings],
      ['PUT', `/admin/custom-fields/${field.id}`, fieldSettings],
      ['PUT', '/admin/custom-fields/reorder/leads', ['fieldIds']],
      ['POST', '/admin/tabs', ['module', 'name', 'icon', 'description', 'displayOrder', 'isActive']],
      ['PUT', `/admin/tabs/${tab.id}`, ['module', 'name', 'icon', 'description', 'displayOrder', 'isActive']],
      ['PUT', '/admin/tabs/reorder/leads', ['tabIds']],
      ['POST', '/admin/groups', ['module', 'name', 'tabId', 'section', 'icon', 'columns', 'collapsedByDefault']],
      ['PUT', `/admin/groups/${group.id}`, ['module', 'name', 'tabId', 'section', 'columns', 'isActive']],
      ['PUT', '/admin/groups/reorder/leads', ['groupIds']],
      ['PUT', '/admin/module-layout-settings', ['module', 'layoutType', 'useCustomLayout', 'layoutId', 'config']],
      ['PUT', '/module-settings/leads/form-field-order', ['tabs']],
      ['PUT', '/module-settings/leads/field-validation', ['rules']],
      ['PUT', '/table-preferences/leads', ['visibleColumns', 'columnWidths', 'pageSize', 'defaultSortColumn', 'defaultSortOrder', 'pinnedColumn', 'module', 'isDefault', 'updatedAt']],
      ['PUT', '/general-settings/company', ['companyName', 'email', 'phone', 'website', 'logoUrl', 'currency', 'defaultCurrency', 'baseCountry', 'timezone', 'updatedAt']],
      ['POST', '/admin/industries', ['name', 'sortOrder', 'isActive']],
      ['PUT', `/admin/industries/${industry.id}`, ['name', 'sortOrder', 'isActive']],
    ]);
    for (const path of ['/admin/custom-fields?module=', '/admin/custom-fields?asOf=', '/admin/groups?tabId=', '/admin/module-layout-settings/check?module=leads&layoutType=']) {
      for (const value of ['%00', '%ED%A0%80', 'constructor', '__proto__']) {
        const res = await call('GET', path + value);
        if (res.status >= 500) failures.push(`GET ${path}${value} → ${res.status}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('every list answers an odd sortBy (a prototype property) with 200 in its default order', async () => {
    const lead = (await call('POST', '/leads', { lastName: 'Sorted', company: 'B' })).body;
    await call('POST', '/leads', { lastName: 'Other', company: 'A' });
    const contact = (await call('POST', '/contacts', { lastName: 'Sorted' })).body;
    await call('POST', '/contacts', { lastName: 'Other' });
    const account = (await call('POST', '/accounts', { name: 'Sorted Co' })).body;
    await call('POST', '/accounts', { name: 'Other Co' });
    await call('POST', '/teams', { name: 'Sorters' });
    await call('POST', '/products', { name: 'Sorted product' });
    await call('POST', '/products', { name: 'Other product' });
    await call('POST', '/products/categories', { name: 'Sorted category' });
    const sortedBook = (await call('POST', '/products/price-books', { name: 'Sorted book' })).body;
    const bundle = (await call('POST', '/products', { name: 'Sorted bundle' })).body;
    const task = (await call('POST', '/tasks', { title: 'Sorted task', dueDate: '2030-01-01' })).body;
    await call('POST', '/tasks', { title: 'Other task' });
    const deal = (await call('POST', '/opportunities', { name: 'Sorted deal', accountId: account.id })).body;
    await call('POST', '/opportunities', { name: 'Other deal', accountId: account.id, amount: 5 });
    const lists = [
      '/products', '/products/categories', '/products/categories/list', '/products/price-books', '/products/price-books/list',
      `/products/price-books/${sortedBook.id}/entries`, `/products/${bundle.id}/bundle-items`,
      '/contacts', '/accounts', '/leads', '/leads?view=kanban', '/users', '/users/invitations', '/users/lookup/roles',
      '/users/lookup/departments', '/users/lookup/teams', '/users/org-tree', '/roles', '/departments', '/teams',
      '/admin/audit-trail', '/admin/outbox', '/lead-settings/pipelines', '/lead-settings/stages', '/lead-settings/priorities',
      '/lead-settings/sources', '/lead-settings/disqualification-reasons', '/lead-settings/team-roles', '/lead-settings/scoring-rules',
      '/lead-settings/stage-ownership', `/leads/${lead.id}/activities`, `/leads/${lead.id}/notes`, `/leads/${lead.id}/products`,
      `/leads/${lead.id}/team`, `/contacts/${contact.id}/activities`, `/contacts/${contact.id}/accounts`, `/accounts/${account.id}/children`,
      `/users/${admin.user.id}/direct-reports`,
      '/tasks', '/tasks/dashboard/upcoming', `/tasks/${task.id}/subtasks`, `/tasks/${task.id}/activities`, `/tasks/${task.id}/notes`,
      '/opportunities', '/opportunities/forecast', `/opportunities/${deal.id}/stage-history`, `/opportunities/${deal.id}/activities`,
      '/forms', '/webhooks',
    ];
    const failures: string[] = [];
    for (const list of lists) {
      const plain = await call('GET', list);
      expect(plain.status, list).to.equal(200);
      for (const sortBy of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'prototype', 'length']) {
        const res = await call('GET', `${list}${list.includes('?') ? '&' : '?'}sortBy=${sortBy}`);
        if (res.status !== 200) failures.push(`GET ${list} sortBy=${sortBy} → ${res.status} ${JSON.stringify(res.body)}`);
        else if (JSON.stringify(res.body) !== JSON.stringify(plain.body)) failures.push(`GET ${list} sortBy=${sortBy}: not the default order`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('date filters refuse dates PostgreSQL or a client could not hold (outside 0001–9999) with 400', async () => {
    const filters = ['/admin/audit-trail?from=', '/admin/audit-trail?to=', '/leads/sla/summary?dateFrom=', '/leads/sla/summary?dateTo=', '/tasks?dueBefore=', '/tasks?dueAfter=', '/opportunities?expectedCloseBefore=', '/opportunities?expectedCloseAfter=', '/dashboard/stats?asOf=', '/dashboard/opportunity-pipeline?asOf='];
    const before = await call('GET', '/admin/audit-trail?limit=1');
    for (const filter of filters) {
      for (const date of ['99999-01-01', '-271821-04-20', '294277-01-01', '%2B275760-09-13', '0000-12-31', '10000-01-01T00:00:00Z']) {
        const res = await call('GET', filter + date);
        expect(res.status, filter + date).to.equal(400);
        expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
        expect(res.body.message, filter + date).to.match(/date between 0001-01-01 and 9999-12-31|a date, such as/);
      }
      for (const date of ['2026-01-31', '0001-01-01', '9999-12-31T23:59:59Z']) expect((await call('GET', filter + date)).status, filter + date).to.equal(200);
    }
    expect((await call('GET', '/admin/audit-trail?limit=1')).body.meta.total).to.equal(before.body.meta.total);
  });
});

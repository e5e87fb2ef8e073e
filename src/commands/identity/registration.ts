import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../infra/passwords.js';
import { conflict, invalid, unavailable } from '../../domain/errors.js';
import { SEEDED_ROLES } from '../../domain/permissions.js';
import { executePlan, newStreamWrite, savePlan, type WritePlan } from '../write-plan.js';
import { leadSettingsAggregate } from '../lead-settings/lead-settings.js';
import { leadSettingsSeed } from '../lead-settings/lead-settings-seed.js';
import { taskSettingsAggregate } from '../task-settings/task-settings.js';
import { taskSettingsSeed } from '../task-settings/task-settings-seed.js';
import { priceBooksAggregate } from '../products/price-books.js';
import { opportunitySettingsAggregate } from '../opportunity-settings/opportunity-settings.js';
import { opportunitySettingsSeed } from '../opportunity-settings/opportunity-settings-seed.js';
import { notificationSettingsAggregate, notificationSettingsSeed } from '../notifications/notification-settings.js';
import { systemReportsAggregate, systemReportsSeed } from '../reports/system-reports.js';
import { generalSettingsAggregate, industriesSeed } from '../general-settings/general-settings.js';
import { issueTokens, principalOrFail } from './auth.js';
import { claimUnique, userEmailClaim, type CommandContext, type IdentityDeps } from './identity-deps.js';
import { departmentAggregate, roleAggregate } from './organisation.js';
import { slugify, tenantAggregate } from './tenants.js';
import { userAggregate } from './users.js';

export interface RegisterInput {
  email: string;
  password: string;
  companyName: string;
  firstName: string;
  lastName: string;
  companySlug?: string;
}

/**
 * Creates the tenant, its seeded roles, department, lead, task and opportunity settings, and its first
 * administrator: one write plan over all their streams, stored in the same transaction
 * as the claims on slug, company name and email (409 when taken) and the password hash.
 * Nothing is written before that transaction commits; after it, the plan is carried out
 * in full (now, or by the pending-plan job after a crash) and the claims are kept.
 */
export async function register(deps: IdentityDeps, input: RegisterInput, correlationId: string) {
  const tenantId = randomUUID();
  const userId = randomUUID();
  const slug = input.companySlug ?? slugify(input.companyName);
  if (!slug) throw invalid('companyName must contain letters or digits');
  const email = input.email.trim().toLowerCase();
  const claims: [string, string][] = [
    ['tenant_slug', slug],
    ['company_name', input.companyName.trim().toLowerCase()],
    ['registration_email', email],
    ['user_email', userEmailClaim(tenantId, email)],
  ];
  const taken = (scope: string) =>
    conflict(scope === 'registration_email' ? 'An account with this email already exists' : 'A company with this name already exists');
  // A cheap look first, so an obvious duplicate costs no password hashing; the claims below decide.
  const already = await deps.knex('unique_claims').whereIn(['scope', 'value'], claims).first('scope');
  if (already) throw taken(already.scope);
  const passwordHash = await hashPassword(input.password);
  const plan = registrationPlan(tenantId, userId, slug, email, input, { tenantId, userId, correlationId }, deps.clock.now());
  await deps.knex.transaction(async (trx) => {
    for (const [scope, value] of claims) {
      if (!(await claimUnique(trx, scope, value, tenantId))) throw taken(scope);
    }
    await trx('user_credentials').insert({ user_id: userId, tenant_id: tenantId, password_hash: passwordHash, updated_at: deps.clock.now() });
    await savePlan(trx, plan, deps.clock.now());
  });
  let position;
  try {
    position = await executePlan(deps, plan);
  } catch (error) {
    deps.logger.error({ err: error, plan: plan.id }, 'registration stored but not yet written; the pending-plan job completes it');
    throw unavailable('The registration was received and will be completed within a minute; sign in then');
  }
  await deps.waitForProjections(position);
  const principal = await principalOrFail(deps, tenantId, userId);
  return { ...(await issueTokens(deps, principal)), principal };
}

/** Every stream a registration writes, decided up front (all are new streams). */
function registrationPlan(tenantId: string, userId: string, slug: string, email: string, input: RegisterInput, ctx: CommandContext, now: Date): WritePlan {
  const writes = [newStreamWrite(tenantAggregate, tenantId, { kind: 'register', id: tenantId, slug, companyName: input.companyName.trim() }, ctx, now)];
  const roleIds = new Map<string, string>();
  for (const role of SEEDED_ROLES) {
    const id = randomUUID();
    roleIds.set(role.key, id);
    const { key: _key, ...fields } = role;
    writes.push(newStreamWrite(roleAggregate, id, { kind: 'create', id, fields: { ...fields, isSystem: true } }, ctx, now));
  }
  const departmentId = randomUUID();
  writes.push(
    newStreamWrite(departmentAggregate, departmentId, {
      kind: 'create',
      id: departmentId,
      fields: { name: 'General', description: 'Default department', headId: userId, parentId: null },
    }, ctx, now),
  );
  writes.push(newStreamWrite(leadSettingsAggregate, tenantId, { kind: 'seed', events: leadSettingsSeed(randomUUID) }, ctx, now));
  writes.push(newStreamWrite(taskSettingsAggregate, tenantId, { kind: 'seed', events: taskSettingsSeed(randomUUID) }, ctx, now));
  writes.push(newStreamWrite(priceBooksAggregate, tenantId, { kind: 'seed', id: randomUUID() }, ctx, now));
  writes.push(newStreamWrite(opportunitySettingsAggregate, tenantId, { kind: 'seed', events: opportunitySettingsSeed(randomUUID) }, ctx, now));
  writes.push(newStreamWrite(notificationSettingsAggregate, tenantId, { kind: 'seed', events: notificationSettingsSeed(randomUUID) }, ctx, now));
  writes.push(newStreamWrite(generalSettingsAggregate, tenantId, { kind: 'seed_industries', events: industriesSeed(randomUUID) }, ctx, now));
  writes.push(newStreamWrite(systemReportsAggregate, tenantId, systemReportsSeed(), ctx, now));
  writes.push(
    newStreamWrite(userAggregate, userId, {
      kind: 'create',
      id: userId,
      source: 'registration',
      fields: {
        email,
        firstName: input.firstName.trim(),
        lastName: input.lastName.trim(),
        title: null,
        phone: null,
        roleId: roleIds.get('admin')!,
        departmentId,
        managerId: null,
      },
    }, ctx, now),
  );
  return { id: randomUUID(), tenantId, kind: 'registration', writes };
}

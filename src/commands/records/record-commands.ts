import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { AccountFields } from '../../events/accounts.js';
import type { ContactFields } from '../../events/contacts.js';
import { accountAggregate } from '../accounts.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { contactAggregate } from '../contacts.js';
import { invalid, notFound } from '../../domain/errors.js';
import { wouldLoop } from '../../facts/hierarchy.js';
import { accountExists } from '../../facts/records.js';
import type { EventStore } from '../../events/store/types.js';
import { assertLiveUser } from '../identity/user-facts.js';
import type { CustomFieldModule } from '../../domain/custom-fields.js';
import { checkedRecordWrite } from '../custom-field-values.js';
import { withCheckedFacts } from '../checked-facts.js';

type Deps = CommandDeps & { knex: Knex };

/** An update's changes with its `customFields` (which replace the stored ones) checked and normalised. */
export async function withCheckedCustomFields<C extends { customFields?: Record<string, unknown> | null }>(deps: Deps, ctx: CommandContext, module: CustomFieldModule, changes: C): Promise<C> {
  const customFields = await checkedRecordWrite(deps, ctx.tenantId, module, { fields: changes, customFields: changes.customFields ?? undefined, mode: 'replace' });
  return customFields === undefined ? changes : { ...changes, customFields };
}

async function assertLiveAccount(knex: Knex, tenantId: string, id: string, what = 'Account'): Promise<void> {
  if (!(await accountExists(knex, tenantId, id))) throw notFound(what);
}

/** An owner must be a user of the tenant (not deleted), as of the user's stream. */
export async function assertOwner(store: EventStore, tenantId: string, ownerId: string | undefined): Promise<void> {
  if (ownerId) await assertLiveUser(store, tenantId, ownerId, 'ownerId');
}

/** A new contact; `id` is fresh unless the caller made it (to name the contact's stream before it exists). */
export async function createContact(deps: Deps, ctx: CommandContext, given: Omit<ContactFields, 'ownerId'> & { ownerId?: string }, id: string = randomUUID()) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    const fields = { ...given, customFields: (await checkedRecordWrite(deps, ctx.tenantId, 'contacts', { fields: given, customFields: given.customFields, mode: 'create' }))! };
    const result = await handleCommand(deps, contactAggregate, id, { kind: 'create', id, fields: { ...fields, ownerId: fields.ownerId ?? ctx.userId! } }, ctx, { newStream: true });
    return { id, position: result.position };
  });
}

export async function updateContact(deps: Deps, ctx: CommandContext, id: string, given: Partial<ContactFields>) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    const changes = await withCheckedCustomFields(deps, ctx, 'contacts', given);
    return handleCommand(deps, contactAggregate, id, { kind: 'update', id, changes }, ctx);
  });
}

export const deleteContact = (deps: Deps, ctx: CommandContext, id: string) => handleCommand(deps, contactAggregate, id, { kind: 'delete', id }, ctx);

export const addContactNote = (deps: CommandDeps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  handleCommand(deps, contactAggregate, id, { kind: 'add-note', id, ...note }, ctx);

export async function linkContactToAccount(deps: Deps, ctx: CommandContext, id: string, accountId: string, role: string) {
  await assertLiveAccount(deps.knex, ctx.tenantId, accountId);
  return handleCommand(deps, contactAggregate, id, { kind: 'link-account', id, accountId, role }, ctx);
}

export const unlinkContactFromAccount = (deps: Deps, ctx: CommandContext, id: string, accountId: string) =>
  handleCommand(deps, contactAggregate, id, { kind: 'unlink-account', id, accountId }, ctx);

/** The parent must be a live account of the tenant that is not this account or below it. */
async function assertParent(knex: Knex, tenantId: string, id: string | null, parentId: string | null | undefined): Promise<void> {
  if (!parentId) return;
  if (parentId === id) throw invalid('An account cannot be its own parent', [{ path: 'parentAccountId', message: 'cycle', code: 'cycle' }]);
  if (!(await accountExists(knex, tenantId, parentId))) throw invalid('parentAccountId does not name an account', [{ path: 'parentAccountId', message: 'not found', code: 'unknown_reference' }]);
  if (id && (await wouldLoop(knex, 'accounts', tenantId, id, parentId))) {
    throw invalid('That parent is a child of this account: the hierarchy would loop', [{ path: 'parentAccountId', message: 'cycle', code: 'cycle' }]);
  }
}

/** A new account; `id` as for createContact. */
export async function createAccount(deps: Deps, ctx: CommandContext, given: Omit<AccountFields, 'ownerId'> & { ownerId?: string }, id: string = randomUUID()) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertParent(deps.knex, ctx.tenantId, null, given.parentAccountId);
    const fields = { ...given, customFields: (await checkedRecordWrite(deps, ctx.tenantId, 'accounts', { fields: given, customFields: given.customFields, mode: 'create' }))! };
    const result = await handleCommand(deps, accountAggregate, id, { kind: 'create', id, fields: { ...fields, ownerId: fields.ownerId ?? ctx.userId! } }, ctx, { newStream: true });
    return { id, position: result.position };
  });
}

export async function updateAccount(deps: Deps, ctx: CommandContext, id: string, given: Partial<AccountFields>) {
  return withCheckedFacts(deps.store, async () => {
    await assertOwner(deps.store, ctx.tenantId, given.ownerId);
    await assertParent(deps.knex, ctx.tenantId, id, given.parentAccountId);
    const changes = await withCheckedCustomFields(deps, ctx, 'accounts', given);
    return handleCommand(deps, accountAggregate, id, { kind: 'update', id, changes }, ctx);
  });
}

export const deleteAccount = (deps: Deps, ctx: CommandContext, id: string) => handleCommand(deps, accountAggregate, id, { kind: 'delete', id }, ctx);

export const addAccountNote = (deps: CommandDeps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  handleCommand(deps, accountAggregate, id, { kind: 'add-note', id, ...note }, ctx);

import { randomUUID } from 'node:crypto';
import { accountExists, contactExists, liveDocumentsOf, newestActivities, productNamesById } from '../../facts/records.js';
import type { Knex } from 'knex';
import { conflict, invalid, notFound, unavailable } from '../../domain/errors.js';
import type { AccountFields } from '../../events/accounts.js';
import type { ContactFields, CopiedActivity, CopiedNote } from '../../events/contacts.js';
import { comparePositions } from '../../events/store/position.js';
import type { Position, RecordedEvent } from '../../events/store/types.js';
import type { Logger } from '../../infra/logger.js';
import { foldRecorded, stale, streamIdOf, type Aggregate, type CommandContext, type CommandDeps, type DomainEvent } from '../aggregate.js';
import { accountAggregate } from '../accounts.js';
import { contactAggregate, type ContactCommand } from '../contacts.js';
import { documentAggregate } from '../uploads.js';
import { settingOf } from '../lead-settings/lead-settings.js';
import { opportunityAggregate, type OpportunityCommand, type OpportunityContext } from '../opportunities/opportunity-aggregate.js';
import { loadOpportunitySettings } from '../opportunity-settings/opportunity-settings.js';
import { assigningAllOpportunitySettings } from '../opportunity-settings/opportunity-settings-usage.js';
import { assertOwner } from '../records/record-commands.js';
import { carriedCustomFields } from '../custom-field-values.js';
import { executePlan, pendingPlanAbout, planLockKey, PlanSupersededError, savePlan, streamWrite, STUCK_PLAN_FAILED_RUNS, type StreamWrite, type WritePlan } from '../write-plan.js';
import { oneAtATime } from '../../infra/key-locks.js';
import { loadLeadSettings } from './lead-commands.js';
import { leadAggregate, type LeadView } from './leads.js';

/*
 * Lead conversion touches up to four aggregates (lead, contact, account, opportunity), so
 * it is one stored write plan (write-plan.ts). The lead's write comes first and expects the
 * revision the plan was decided on: if the lead moved meanwhile, nothing was written, the
 * plan is dropped and decided again. Once the lead's write is in, the rest are new streams
 * (or `any` appends of a link and copied history) with fixed event ids, which a rerun — the
 * retried request, or the pending-plan job — completes without a second contact, account
 * or opportunity.
 */

export const CONVERSION_PLAN = 'lead-conversion';

export interface ConversionRequest {
  /** Make a contact from the lead, reuse an existing one, or none. */
  contact: { create: true } | { existingId: string } | null;
  account: { create: true; name: string | null } | { existingId: string } | null;
  opportunity: { name: string | null; pipelineId?: string; stageId?: string; amount?: number | null; expectedCloseDate?: string | null } | null;
  /** Owner of what is created: this user, else the lead's owner. */
  ownerId?: string;
  notes: string | null;
}

export interface ConversionResult {
  contactId: string | null;
  accountId: string | null;
  opportunityId: string | null;
  position: Position | null;
}

type Deps = CommandDeps & { knex: Knex; logger?: Logger };

/** At most this many notes and activities are copied onto the contact (the newest). */
export const COPY_LIMIT = 500;

const leadStream = (id: string) => streamIdOf(leadAggregate, id);

/** Events of several commands on one aggregate, each decided on the state the previous ones left. */
function decideInTurn<S, E extends DomainEvent, C, X>(aggregate: Aggregate<S, E, C, X>, state: S, commands: C[], context: X): E[] {
  const events: E[] = [];
  for (const command of commands) {
    const decided = aggregate.decide(command, state, context);
    state = decided.reduce(aggregate.evolve, state);
    events.push(...decided);
  }
  return events;
}

/** What the contact made from a lead starts with. */
function contactFieldsOf(lead: LeadView, ownerId: string): ContactFields {
  return {
    firstName: lead.firstName,
    lastName: lead.lastName!,
    email: lead.email,
    phone: lead.phone,
    mobile: lead.mobile,
    title: lead.title,
    department: null,
    source: lead.source,
    description: lead.description,
    mailingAddress: lead.address,
    company: lead.company,
    industry: lead.industry ?? null,
    customFields: lead.customFields,
    // The lead's email and phone become the contact's primary ones (the decider makes the lists).
    emails: [],
    phones: [],
    addresses: [],
    socialProfiles: lead.socialProfiles ?? {},
    tags: [],
    doNotContact: false,
    doNotEmail: false,
    doNotCall: false,
    ownerId,
  };
}

export const fullName = (lead: Pick<LeadView, 'firstName' | 'lastName'>) => [lead.firstName, lead.lastName].filter((p) => p?.trim()).join(' ');

function accountFieldsOf(lead: LeadView, name: string | null, ownerId: string): AccountFields {
  const accountName = name?.trim() || lead.company?.trim() || fullName(lead);
  if (!accountName) throw invalid('The new account needs a name: give accountName, or a company on the lead', [{ path: 'accountName', message: 'required', code: 'required' }]);
  return {
    name: accountName,
    type: null,
    industry: lead.industry ?? null,
    website: lead.website,
    phone: null,
    email: null,
    annualRevenue: null,
    employees: null,
    parentAccountId: null,
    billingAddress: lead.address,
    shippingAddress: null,
    description: null,
    customFields: {},
    accountType: null,
    emails: [],
    phones: [],
    addresses: [],
    socialProfiles: {},
    tags: [],
    ownerId,
  };
}

/** Fields a conversion with these choices needs on the lead and does not find there. */
export function missingFields(lead: Pick<LeadView, 'lastName'>, createsContact: boolean): string[] {
  return createsContact && !lead.lastName?.trim() ? ['lastName'] : [];
}

/** The lead's own notes (from its stream) and its newest activities (from the timeline), as copies. */
async function leadHistory(deps: Deps, tenantId: string, leadId: string, recorded: { type: string; data: any; metadata: { userId: string | null }; createdAt: Date }[]) {
  const notes: CopiedNote[] = recorded
    .filter((e) => e.type === 'NoteAdded')
    .slice(-COPY_LIMIT)
    .map((e) => ({ noteId: e.data.noteId, content: e.data.content, createdBy: e.metadata.userId, createdAt: e.createdAt.toISOString() }));
  const rows = await newestActivities(deps.knex, tenantId, 'lead', leadId, COPY_LIMIT);
  const activities: CopiedActivity[] = rows.reverse().map((r) => ({
    activityId: r.id,
    activityType: r.activity_type,
    title: r.title,
    description: r.description,
    performedBy: r.performed_by,
    createdAt: new Date(r.created_at).toISOString(),
  }));
  return { notes, activities };
}

/** Catalogue names of products whose lead line has none. */
async function productNames(knex: Knex, tenantId: string, lines: { productId: string; productName: string | null }[]): Promise<Map<string, string>> {
  const ids = lines.filter((l) => !l.productName).map((l) => l.productId);
  return productNamesById(knex, tenantId, ids);
}

/**
 * The lead's live documents as new documents of the contact: the same stored bytes (deletes
 * are soft, so bytes are never removed under a copy), the same name, type, uploader and
 * visibility, each on its own new stream.
 */
async function documentCopies(knex: Knex, ctx: CommandContext, leadId: string, contactId: string, now: Date): Promise<StreamWrite[]> {
  const rows = await liveDocumentsOf(knex, ctx.tenantId, 'lead', leadId, COPY_LIMIT);
  return rows.map((r) => {
    const id = randomUUID();
    const document = {
      id, recordType: 'contact', recordId: contactId, name: r.name, mimeType: r.mime_type, size: Number(r.size), storageKey: r.storage_key,
      uploadedBy: r.uploaded_by, visibility: r.visibility, disposition: r.disposition,
    };
    return streamWrite(streamIdOf(documentAggregate, id), 'no_stream', documentAggregate.decide({ kind: 'upload', document }, documentAggregate.initialState), ctx, now);
  });
}

/** Existing records a conversion reuses must be live records of the tenant. */
async function assertLive(knex: Knex, tenantId: string, kind: 'contact' | 'account', id: string, field: string) {
  const exists = kind === 'contact' ? contactExists : accountExists;
  if (!(await exists(knex, tenantId, id))) throw invalid(`${field} does not name a ${kind} of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
}

/** The lead's revision once the plan's lead write is in: the answer's ETag, as for any write under the lead. */
function settleIfMatch(ctx: CommandContext, leadWrite: StreamWrite): void {
  if (ctx.version?.streamId !== leadWrite.streamId || typeof leadWrite.expectedRevision !== 'number') return;
  Object.assign(ctx.version, { expectedRevision: undefined, revision: leadWrite.expectedRevision + leadWrite.events.length });
}

/** The ids a conversion plan gives, read back from its lead event. */
function resultOf(plan: WritePlan, position: Position | null): ConversionResult {
  const converted = plan.writes[0].events.find((e) => e.type === 'LeadConverted')!.data as { contactId: string | null; accountId: string | null; opportunityId: string | null };
  return { contactId: converted.contactId, accountId: converted.accountId, opportunityId: converted.opportunityId, position };
}

/** Runs a stored plan to its end; a failure half-way leaves it for a retry or the pending-plan job. */
async function carryOut(deps: Deps, plan: WritePlan): Promise<ConversionResult> {
  try {
    return resultOf(plan, await executePlan(deps, plan));
  } catch (error) {
    if (error instanceof PlanSupersededError) throw error;
    deps.logger?.error({ err: error, plan: plan.id }, 'lead conversion stored but not yet fully written; a retry or the pending-plan job completes it');
    throw unavailable('The conversion was received and will be completed within a minute; retrying the request completes it now');
  }
}

/**
 * Converts a lead (see the comment at the top). A conversion that an earlier request left
 * half-way is completed and answered instead of deciding a new one.
 */
export async function convertLead(deps: Deps, ctx: CommandContext, leadId: string, request: ConversionRequest): Promise<ConversionResult> {
  await assertOwner(deps.store, ctx.tenantId, request.ownerId);
  if (request.contact && 'existingId' in request.contact) await assertLive(deps.knex, ctx.tenantId, 'contact', request.contact.existingId, 'contactId');
  if (request.account && 'existingId' in request.account) await assertLive(deps.knex, ctx.tenantId, 'account', request.account.existingId, 'accountId');
  if (request.opportunity && !request.account) {
    throw invalid('An opportunity needs an account: set createAccount or give accountId', [{ path: 'createOpportunity', message: 'needs an account', code: 'needs_account' }]);
  }
  // One conversion of a lead at a time, here and in the pending-plan job (the same key): a
  // plan is never carried out twice at once, and the next caller sees the lead converted.
  return oneAtATime(deps.knex, planLockKey(leadStream(leadId)), async () => {
    const pending = await pendingPlanAbout(deps.knex, ctx.tenantId, CONVERSION_PLAN, leadStream(leadId));
    if (pending) {
      try {
        return await carryOut(deps, pending);
      } catch (error) {
        // Its lead moved on before it began: it was dropped, and this request decides anew.
        if (!(error instanceof PlanSupersededError)) throw error;
      }
    }
    return assigningAllOpportunitySettings(deps.knex, ctx.tenantId, async () => {
      for (let attempt = 1; attempt <= 10; attempt++) {
        const plan = await decidePlan(deps, ctx, leadId, request);
        try {
          await deps.knex.transaction((trx) => savePlan(trx, plan, deps.clock.now()));
        } catch (error) {
          if ((error as { code?: string }).code === '23505') throw conflict('This lead is being converted by another request');
          throw error;
        }
        try {
          const result = await carryOut(deps, plan);
          settleIfMatch(ctx, plan.writes[0]);
          return result;
        } catch (error) {
          if (!(error instanceof PlanSupersededError)) throw error;
        }
      }
      throw conflict('The lead was changed by someone else meanwhile; try again');
    });
  });
}

/** Every stream's events of one conversion, decided on the lead and settings as they are now. */
async function decidePlan(deps: Deps, ctx: CommandContext, leadId: string, request: ConversionRequest): Promise<WritePlan> {
  const recorded = await deps.store.readStream(leadStream(leadId));
  // Another tenant's lead reads as absent.
  if (recorded.length && recorded[0].metadata.tenantId !== ctx.tenantId) throw notFound('Lead');
  // The client's If-Match on the lead: a conversion decided on another revision is a 412 (checked again on every re-decision).
  const expected = ctx.version?.streamId === leadStream(leadId) ? ctx.version.expectedRevision : undefined;
  const revision = recorded.length ? recorded[recorded.length - 1].revision : -1;
  if (expected !== undefined && revision !== expected) throw stale(revision < 0 ? 'no_stream' : revision);
  const leadState = foldRecorded(leadAggregate, recorded);
  if (leadState.status !== 'active') throw notFound('Lead');
  const lead = leadState.fields;
  const now = deps.clock.now();
  const pipelines = await loadLeadSettings(deps.store, ctx.tenantId);
  const ownerId = request.ownerId ?? lead.ownerId;

  const contactId = request.contact ? ('existingId' in request.contact ? request.contact.existingId : randomUUID()) : null;
  const accountId = request.account ? ('existingId' in request.account ? request.account.existingId : randomUUID()) : null;
  const opportunityId = request.opportunity ? randomUUID() : null;
  const created = { contact: !!request.contact && 'create' in request.contact, account: !!request.account && 'create' in request.account, opportunity: !!opportunityId };
  const leadEvents = leadAggregate.decide(
    { kind: 'convert', id: leadId, contactId, accountId, opportunityId, created, notes: request.notes },
    leadState,
    { settings: pipelines, now },
  );
  const missing = missingFields(lead, created.contact);
  if (missing.length) {
    throw invalid(`The lead lacks what the new contact needs: ${missing.join(', ')}`, missing.map((path) => ({ path, message: 'required', code: 'required' })));
  }
  const last = recorded[recorded.length - 1];
  const writes: StreamWrite[] = [streamWrite(leadStream(leadId), last.revision, leadEvents, ctx, now)];

  if (accountId && created.account) {
    const given = accountFieldsOf(lead, 'create' in request.account! ? request.account.name : null, ownerId);
    const fields = { ...given, customFields: await carriedCustomFields(deps, ctx.tenantId, 'accounts', lead.customFields, given, 'account') };
    writes.push(streamWrite(streamIdOf(accountAggregate, accountId), 'no_stream', accountAggregate.decide({ kind: 'create', id: accountId, fields }, accountAggregate.initialState), ctx, now));
  }
  if (contactId) {
    const copy = settingOf(pipelines, 'conversion');
    const history = await leadHistory(deps, ctx.tenantId, leadId, recorded);
    const commands: ContactCommand[] = [];
    if (created.contact) {
      const given = contactFieldsOf(lead, ownerId);
      commands.push({ kind: 'create', id: contactId, fields: { ...given, customFields: await carriedCustomFields(deps, ctx.tenantId, 'contacts', lead.customFields, given, 'contact') } });
    }
    if (accountId) commands.push({ kind: 'link-account', id: contactId, accountId, role: 'primary' });
    commands.push({
      kind: 'copy-timeline',
      id: contactId,
      fromRecordType: 'lead',
      fromRecordId: leadId,
      notes: copy.copyNotes ? history.notes : [],
      activities: copy.copyActivities ? history.activities : [],
    });
    // An existing contact is decided on as it is now; its events go on with `any` (a link and a copy do not conflict with edits).
    const contactState = created.contact
      ? contactAggregate.initialState
      : foldRecorded(contactAggregate, await deps.store.readStream(streamIdOf(contactAggregate, contactId)));
    const events = decideInTurn(contactAggregate, contactState, commands, undefined);
    if (events.length) writes.push(streamWrite(streamIdOf(contactAggregate, contactId), created.contact ? 'no_stream' : 'any', events, ctx, now));
    if (copy.copyDocuments) writes.push(...(await documentCopies(deps.knex, ctx, leadId, contactId, now)));
  }
  if (opportunityId && request.opportunity) {
    const o = request.opportunity;
    const context: OpportunityContext = { pipelines, settings: await loadOpportunitySettings(deps.store, ctx.tenantId), now };
    const input = {
      name: o.name?.trim() || `${lead.company?.trim() || lead.lastName?.trim() || fullName(lead) || 'Lead'} - Opportunity`,
      accountId: accountId!,
      pipelineId: o.pipelineId,
      stageId: o.stageId,
      amount: o.amount ?? lead.estimatedValue,
      expectedCloseDate: o.expectedCloseDate ?? null,
      source: lead.source,
      description: lead.description,
      customFields: {},
      ownerId,
    };
    input.customFields = await carriedCustomFields(deps, ctx.tenantId, 'opportunities', lead.customFields, input, 'opportunity');
    const commands: OpportunityCommand[] = [{ kind: 'create', id: opportunityId, input }];
    // The contact becomes the deal's primary contact; the lead's products its line items (the amount follows them).
    if (contactId) commands.push({ kind: 'set-contact-role', id: opportunityId, contactRoleId: randomUUID(), contactId, role: 'primary_contact', isPrimary: true });
    const names = await productNames(deps.knex, ctx.tenantId, Object.values(lead.products));
    for (const line of Object.values(lead.products)) {
      commands.push({
        kind: 'add-line-item',
        id: opportunityId,
        itemId: randomUUID(),
        line: {
          productId: line.productId,
          productName: line.productName ?? names.get(line.productId) ?? 'Product',
          quantity: line.quantity,
          unitPrice: line.unitPrice,
          discount: line.discount,
          discountType: line.discountType === 'amount' ? 'fixed' : 'percentage',
          description: null,
        },
      });
    }
    // An amount the request gives is the negotiated figure: it stands over the lines' sum.
    if (o.amount != null && Object.keys(lead.products).length) commands.push({ kind: 'update', id: opportunityId, changes: { amount: o.amount } });
    const events = decideInTurn(opportunityAggregate, opportunityAggregate.initialState, commands, context);
    writes.push(streamWrite(streamIdOf(opportunityAggregate, opportunityId), 'no_stream', events, ctx, now));
  }
  return { id: randomUUID(), tenantId: ctx.tenantId, kind: CONVERSION_PLAN, subject: leadStream(leadId), writes };
}

/**
 * Where the conversion that `converted` (a LeadConverted event) began is written through:
 * the latest position of the records it made or touched, or 'pending' while its plan is
 * still being carried out (the lead's write comes first, the rest after). A saga acting on
 * the conversion reads those records, so it waits for this, not only for the lead's event.
 */
export async function conversionWrittenThrough(deps: { store: CommandDeps['store']; knex: Knex }, converted: RecordedEvent): Promise<Position | 'pending' | { stuck: string }> {
  const pending = await pendingPlanAbout(deps.knex, converted.metadata.tenantId, CONVERSION_PLAN, converted.streamId);
  if (pending?.writes[0]?.events.some((e) => e.id === converted.id)) {
    if (pending.failedRuns < STUCK_PLAN_FAILED_RUNS) return 'pending';
    return { stuck: `the conversion's records could not be written (${pending.failedRuns} tries): ${pending.lastError ?? 'unknown error'}` };
  }
  const data = converted.data as { contactId?: string | null; accountId?: string | null; opportunityId?: string | null };
  const streams = [
    data.contactId && streamIdOf(contactAggregate, data.contactId),
    data.accountId && streamIdOf(accountAggregate, data.accountId),
    data.opportunityId && streamIdOf(opportunityAggregate, data.opportunityId),
  ].filter((s): s is string => !!s);
  const lasts = await Promise.all(streams.map((s) => deps.store.readLastEvent(s)));
  return lasts.reduce<Position>((latest, e) => (e && comparePositions(e.position, latest) > 0 ? e.position : latest), converted.position);
}

import type { Knex } from 'knex';
import { DEFAULT_SETTINGS } from '../../domain/lead-settings.js';
import type { Principal } from '../../domain/principal.js';
import type { QualificationField } from '../../events/lead-settings.js';
import type { EventStore } from '../../events/store/types.js';
import { listQualificationFrameworks, listStages } from '../lead-settings.js';
import { lastActivityAt, userRefs, type UserRef } from '../related-records.js';
import { findDuplicates } from './leads.js';

/** The events that put a lead into a stage (creation included). */
const STAGE_EVENTS: Record<string, string> = {
  LeadCreated: 'created',
  LeadStageChanged: 'stage_changed',
  LeadDisqualified: 'disqualified',
  LeadConverted: 'converted',
};

export interface StageHistoryEntry {
  event: string;
  stageId: string;
  stageName: string;
  previousStageId: string | null;
  previousStageName: string | null;
  enteredAt: Date;
  enteredBy: string | null;
  enteredByUser: UserRef | null;
  unlockReason: string | null;
}

/**
 * A lead's stage moves, oldest first, read from its own stream (exactly what happened, as
 * the history endpoint): creation, each change-stage, disqualification and conversion, with
 * the stage left and entered, when, and who moved it.
 */
export async function leadStageHistory(knex: Knex, store: EventStore, tenantId: string, id: string): Promise<StageHistoryEntry[]> {
  const events = (await store.readStream(`lead-${id}`)).filter((e) => e.metadata.tenantId === tenantId && e.type in STAGE_EVENTS);
  const users = await userRefs(knex, tenantId, [...new Set(events.map((e) => e.metadata.userId).filter((u): u is string => !!u))]);
  return events.map((e) => {
    const d = e.data as { stageId?: string; stageName?: string; fromStageId?: string; fromStageName?: string; toStageId?: string; toStageName?: string; unlockReason?: string | null };
    const by = e.metadata.userId ?? null;
    return {
      event: STAGE_EVENTS[e.type],
      stageId: (d.toStageId ?? d.stageId)!,
      stageName: (d.toStageName ?? d.stageName)!,
      previousStageId: d.fromStageId ?? null,
      previousStageName: d.fromStageName ?? null,
      enteredAt: e.createdAt,
      enteredBy: by,
      enteredByUser: by ? (users.get(by) ?? null) : null,
      unlockReason: d.unlockReason ?? null,
    };
  });
}

type Stage = Awaited<ReturnType<typeof listStages>>[number];
type Framework = Awaited<ReturnType<typeof listQualificationFrameworks>>[number];
type Duplicates = Awaited<ReturnType<typeof findDuplicates>>['duplicates'];

interface LeadCore {
  id: string;
  pipelineId: string;
  email: string | null;
  phone: string | null;
}

/**
 * What the lead's detail page reads beyond the lead itself (the reference's detail): the
 * stage bar (`allStages`: the active lead stages of its pipeline in order; `stageSettings`:
 * the tenant's `stages` setting, e.g. lockPreviousStages), `stageHistory`, the
 * qualification framework it is scored on (its own `qualificationFrameworkId` when it has
 * one, else the tenant's active framework) with its questions, possible duplicates in the
 * caller's scope, and when something last happened on it.
 */
export async function leadDetailExtras(deps: { knex: Knex; store: EventStore }, principal: Principal, lead: LeadCore) {
  const { knex, store } = deps;
  const tenantId = principal.tenantId;
  // The two settings the page needs, in one read.
  const settingValues = async (): Promise<Map<string, Record<string, unknown>>> =>
    new Map(
      (await knex('lead_settings').where({ tenant_id: tenantId }).whereIn('key', ['stages', 'general']).select('key', 'value')).map((r: { key: string; value: Record<string, unknown> | null }) => [
        r.key,
        r.value ?? {},
      ]),
    );
  const duplicatesOf = async (): Promise<Duplicates> =>
    lead.email || lead.phone ? (await findDuplicates(knex, principal, { email: lead.email, phone: lead.phone, excludeId: lead.id })).duplicates : [];
  const stagesP: Promise<Stage[]> = listStages(knex, tenantId, lead.pipelineId, 'leads');
  const frameworksP: Promise<Framework[]> = listQualificationFrameworks(knex, tenantId);
  // Independent reads, all at once: the page waits for one round of them, not two.
  const [stages, frameworks, history, duplicates, settings, lastActivity] = await Promise.all([
    stagesP,
    frameworksP,
    leadStageHistory(knex, store, tenantId, lead.id),
    duplicatesOf(),
    settingValues(),
    lastActivityAt(knex, tenantId, lead.id),
  ]);
  const stageSetting = settings.get('stages') ?? {};
  const general = settings.get('general') ?? {};
  const ownFramework = (lead as { qualificationFrameworkId?: string | null }).qualificationFrameworkId;
  const activeSlug = { ...DEFAULT_SETTINGS.general, ...general }.activeQualificationFramework;
  const framework = frameworks.find((f) => (ownFramework ? f.id === ownFramework : f.slug === activeSlug)) ?? null;
  return {
    allStages: stages
      .filter((s) => s.isActive)
      .map((s) => ({ id: s.id, name: s.name, slug: s.slug, color: s.color, sortOrder: s.sortOrder, isWon: s.isWon, isLost: s.isLost, requiredFields: s.requiredFields, lockPreviousFields: s.lockPreviousFields })),
    stageSettings: { ...DEFAULT_SETTINGS.stages, ...stageSetting },
    stageHistory: history,
    qualificationFramework: framework ? { id: framework.id, name: framework.name, slug: framework.slug } : null,
    qualificationFields: framework
      ? framework.fields.map((f: QualificationField) => ({ fieldKey: f.fieldKey, fieldLabel: f.fieldLabel, fieldType: f.fieldType, fieldOptions: f.fieldOptions, scoreWeight: f.scoreWeight, sortOrder: f.sortOrder, isRequired: f.isRequired }))
      : [],
    duplicates,
    lastActivityAt: lastActivity,
  };
}

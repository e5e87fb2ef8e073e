import type { Knex } from 'knex';
import { DEFAULT_SETTINGS, SETTING_KEYS, type QualificationThreshold, type SettingKey } from '../domain/lead-settings.js';
import { PIPELINE_MODULES } from '../events/lead-settings.js';
import type {
  CatalogueFields,
  FieldVisibility,
  LeadPriorityFields,
  PipelineFields,
  PipelineModule,
  QualificationFrameworkFields,
  ScoringRuleFields,
  SettingsCollection,
  StageField,
  StageFields,
  StageOwnership,
} from '../events/lead-settings.js';
import { fromColumns } from '../projections/columns.js';
import { SETTINGS_TABLES } from '../projections/lead-settings.js';

const fieldsOf = (collection: SettingsCollection) => SETTINGS_TABLES[collection][1];

/**
 * Read models of a tenant's lead settings, as camelCase records. Every query starts from
 * `liveRows`: the tenant's rows of one table that are not deleted.
 */
function liveRows(knex: Knex, table: string, alias: string, tenantId: string): Knex.QueryBuilder {
  return knex(`${table} as ${alias}`).where(`${alias}.tenant_id`, tenantId).whereNull(`${alias}.deleted_at`);
}

/** Live leads of the row's tenant whose `column` names the row. */
const leadCount = (knex: Knex, alias: string, column: string) =>
  knex.raw(`(select count(*) from leads l where l.tenant_id = ${alias}.tenant_id and l.${column} = ${alias}.id and l.deleted_at is null)::int as lead_count`);

// ---------------------------------------------------------------------------------------
// Pipelines

const stageCount = (knex: Knex, module: PipelineModule, as: string) =>
  knex.raw(
    `(select count(*) from pipeline_stages s where s.tenant_id = p.tenant_id and s.pipeline_id = p.id and s.module = ? and s.deleted_at is null)::int as ${as}`,
    [module],
  );

const pipelinesOf = (knex: Knex, tenantId: string) =>
  liveRows(knex, 'pipelines', 'p', tenantId).select(
    'p.*',
    stageCount(knex, 'leads', 'lead_stage_count'),
    stageCount(knex, 'opportunities', 'opp_stage_count'),
    leadCount(knex, 'p', 'pipeline_id'),
  );

const pipelineShape = (p: any) => ({
  id: p.id as string,
  ...(fromColumns(p, fieldsOf('pipelines')) as unknown as PipelineFields),
  leadStageCount: p.lead_stage_count as number,
  oppStageCount: p.opp_stage_count as number,
  leadCount: p.lead_count as number,
  createdAt: p.created_at as Date,
  updatedAt: p.updated_at as Date,
});

/** Which pipelines a list shows: those with stages of a module, of both modules, or all. */
export type PipelineModuleFilter = PipelineModule | 'both';

const hasStagesOf = (knex: Knex, module: PipelineModule) =>
  knex.raw(`exists (select 1 from pipeline_stages s where s.tenant_id = p.tenant_id and s.pipeline_id = p.id and s.module = ? and s.deleted_at is null)`, [module]);

/**
 * Pipelines, with per-module stage counts. Pipelines are shared by leads and opportunities;
 * a pipeline serves a module when it has stages of that module, so `module` keeps those
 * (`both`: pipelines with stages of each), the same as `leadStageCount`/`oppStageCount` > 0.
 */
export async function listPipelines(knex: Knex, tenantId: string, module?: PipelineModuleFilter) {
  const query = pipelinesOf(knex, tenantId);
  for (const each of module === 'both' ? PIPELINE_MODULES : module ? [module] : []) query.where(hasStagesOf(knex, each));
  return (await query.orderBy([{ column: 'p.sort_order' }, { column: 'p.name' }])).map(pipelineShape);
}

export async function getPipeline(knex: Knex, tenantId: string, id: string) {
  const row = await pipelinesOf(knex, tenantId).where('p.id', id).first();
  return row ? pipelineShape(row) : null;
}

/** The tenant's default pipeline's id, or null. */
export async function defaultPipelineIdOf(knex: Knex, tenantId: string): Promise<string | null> {
  const row = await liveRows(knex, 'pipelines', 'p', tenantId).where('p.is_default', true).first('p.id');
  return row?.id ?? null;
}

// ---------------------------------------------------------------------------------------
// Stages

const stagesOf = (knex: Knex, tenantId: string) =>
  liveRows(knex, 'pipeline_stages', 's', tenantId)
    .leftJoin('pipelines as p', 'p.id', 's.pipeline_id')
    .select('s.*', 'p.name as pipeline_name', leadCount(knex, 's', 'stage_id'));

/** A stage as listed: its own fields, not the fields, ownership and visibility it carries (they have their own endpoints). */
const STAGE_RECORD = fieldsOf('stages').filter((f) => !['fields', 'ownership', 'fieldVisibility'].includes(f));
const stageShape = (s: any) => ({
  id: s.id as string,
  pipelineName: s.pipeline_name as string | null,
  ...(fromColumns(s, STAGE_RECORD) as unknown as Omit<StageFields, 'fields' | 'ownership' | 'fieldVisibility'>),
  leadCount: s.lead_count as number,
});

/** The stages of one pipeline and module, in board order. */
export async function listStages(knex: Knex, tenantId: string, pipelineId: string, module: PipelineModule) {
  const rows = await stagesOf(knex, tenantId)
    .where({ 's.pipeline_id': pipelineId, 's.module': module })
    .orderBy([{ column: 's.sort_order' }, { column: 's.name' }]);
  return rows.map(stageShape);
}

export async function getStage(knex: Knex, tenantId: string, id: string) {
  const row = await stagesOf(knex, tenantId).where('s.id', id).first();
  return row ? stageShape(row) : null;
}

// ---------------------------------------------------------------------------------------
// Stage fields

const fieldShape = (stageId: string, f: StageField) => ({
  id: f.id,
  stageId,
  fieldKey: f.fieldKey,
  fieldLabel: f.fieldLabel,
  fieldType: f.fieldType,
  fieldOptions: f.fieldOptions,
  isRequired: f.isRequired,
  isVisible: f.isVisible,
  sortOrder: f.sortOrder,
});

/** A stage's fields in order; null when the stage does not exist. */
export async function listStageFields(knex: Knex, tenantId: string, stageId: string) {
  const row = await liveRows(knex, 'pipeline_stages', 's', tenantId).where('s.id', stageId).first('s.fields');
  if (!row) return null;
  return (row.fields as StageField[])
    .map((f) => fieldShape(stageId, f))
    .sort((a, b) => a.sortOrder - b.sortOrder || a.fieldLabel.localeCompare(b.fieldLabel));
}

export async function getStageField(knex: Knex, tenantId: string, stageId: string, fieldId: string) {
  return (await listStageFields(knex, tenantId, stageId))?.find((f) => f.id === fieldId) ?? null;
}

// ---------------------------------------------------------------------------------------
// Stage ownership and field visibility

const ownershipOf = (knex: Knex, tenantId: string) =>
  liveRows(knex, 'pipeline_stages', 's', tenantId)
    .leftJoin('users as u', function () {
      this.on(knex.raw(`u.id = (s.ownership->>'stageOwnerUserId')::uuid`)).andOn('u.tenant_id', 's.tenant_id').andOnNull('u.deleted_at');
    })
    .leftJoin('teams as t', function () {
      this.on(knex.raw(`t.id = (s.ownership->>'stageOwnerTeamId')::uuid`)).andOn('t.tenant_id', 's.tenant_id').andOnNull('t.deleted_at');
    })
    .leftJoin('roles as r', function () {
      this.on(knex.raw(`r.id = (s.ownership->>'stageOwnerRoleId')::uuid`)).andOn('r.tenant_id', 's.tenant_id').andOnNull('r.deleted_at');
    })
    .select(
      's.id', 's.name', 's.slug', 's.color', 's.sort_order', 's.is_won', 's.is_lost', 's.ownership', 's.field_visibility',
      'u.id as user_id', 'u.first_name as user_first_name', 'u.last_name as user_last_name',
      't.id as team_id', 't.name as team_name',
      'r.id as role_id', 'r.name as role_name',
    );

const ownershipShape = (s: any) => ({
  // `id` is the reference's name of the same stage id (the web client's stage bar reads it).
  id: s.id as string,
  stageId: s.id as string,
  stageOwnerType: (s.ownership as StageOwnership).stageOwnerType,
  stageOwnerUser: s.user_id ? { id: s.user_id as string, firstName: s.user_first_name as string, lastName: s.user_last_name as string } : null,
  stageOwnerTeam: s.team_id ? { id: s.team_id as string, name: s.team_name as string } : null,
  stageOwnerRole: s.role_id ? { id: s.role_id as string, name: s.role_name as string } : null,
  fieldVisibility: s.field_visibility as FieldVisibility,
});

export async function getStageOwnership(knex: Knex, tenantId: string, stageId: string) {
  const row = await ownershipOf(knex, tenantId).where('s.id', stageId).first();
  return row ? ownershipShape(row) : null;
}

/** Ownership of every lead stage of a pipeline, with what a board needs to show the stage. */
export async function listStageOwnership(knex: Knex, tenantId: string, pipelineId: string) {
  const rows = await ownershipOf(knex, tenantId)
    .where({ 's.pipeline_id': pipelineId, 's.module': 'leads' })
    .orderBy([{ column: 's.sort_order' }, { column: 's.name' }]);
  return rows.map((s: any) => ({
    ...ownershipShape(s),
    name: s.name as string,
    slug: s.slug as string,
    color: s.color as string,
    sortOrder: s.sort_order as number,
    isWon: s.is_won as boolean,
    isLost: s.is_lost as boolean,
  }));
}

export async function getFieldVisibility(knex: Knex, tenantId: string, stageId: string) {
  const row = await liveRows(knex, 'pipeline_stages', 's', tenantId).where('s.id', stageId).first('s.id', 's.field_visibility');
  return row ? { stageId: row.id as string, fieldVisibility: row.field_visibility as FieldVisibility } : null;
}

/**
 * What a stage ownership names but the tenant does not have (a live, active user; a live
 * team; a live role), as validation issues.
 */
export async function unknownOwnershipReferences(
  knex: Knex,
  tenantId: string,
  refs: { userId: string | null; teamId: string | null; roleId: string | null },
): Promise<{ path: string; message: string; code: string }[]> {
  const exists = async (table: string, id: string | null, extra: Record<string, unknown> = {}) =>
    id === null || !!(await liveRows(knex, table, 'x', tenantId).where({ 'x.id': id, ...extra }).first('x.id'));
  const [user, team, role] = await Promise.all([
    exists('users', refs.userId, { 'x.status': 'active' }),
    exists('teams', refs.teamId),
    exists('roles', refs.roleId),
  ]);
  const issue = (path: string, what: string) => ({ path, message: `does not name an active ${what} of this tenant`, code: 'unknown_reference' });
  return [...(user ? [] : [issue('stageOwnerUserId', 'user')]), ...(team ? [] : [issue('stageOwnerTeamId', 'team')]), ...(role ? [] : [issue('stageOwnerRoleId', 'role')])];
}

// ---------------------------------------------------------------------------------------
// Priorities, pick lists, scoring rules

const priorityShape = (p: any) => ({
  id: p.id as string,
  ...(fromColumns(p, fieldsOf('priorities')) as unknown as LeadPriorityFields),
  leadCount: p.lead_count as number,
});

const prioritiesOf = (knex: Knex, tenantId: string) => liveRows(knex, 'lead_priorities', 'p', tenantId).select('p.*', leadCount(knex, 'p', 'priority_id'));

export async function listPriorities(knex: Knex, tenantId: string) {
  return (await prioritiesOf(knex, tenantId).orderBy([{ column: 'p.sort_order' }, { column: 'p.name' }])).map(priorityShape);
}

export async function getPriority(knex: Knex, tenantId: string, id: string) {
  const row = await prioritiesOf(knex, tenantId).where('p.id', id).first();
  return row ? priorityShape(row) : null;
}

/** The read-model tables of the named pick lists. */
export const CATALOGUE_TABLES = {
  sources: 'lead_sources',
  disqualificationReasons: 'disqualification_reasons',
  teamRoles: 'record_team_roles',
} as const;
export type Catalogue = keyof typeof CATALOGUE_TABLES;

const catalogueShape = (c: any) => ({ id: c.id as string, ...(fromColumns(c, fieldsOf('sources')) as unknown as CatalogueFields) });

export async function listCatalogue(knex: Knex, tenantId: string, catalogue: Catalogue) {
  const rows = await liveRows(knex, CATALOGUE_TABLES[catalogue], 'c', tenantId).orderBy([{ column: 'c.sort_order' }, { column: 'c.name' }]).select('c.*');
  return rows.map(catalogueShape);
}

export async function getCatalogueItem(knex: Knex, tenantId: string, catalogue: Catalogue, id: string) {
  const row = await liveRows(knex, CATALOGUE_TABLES[catalogue], 'c', tenantId).where('c.id', id).first('c.*');
  return row ? catalogueShape(row) : null;
}

const ruleShape = (r: any) => ({ id: r.id as string, ...(fromColumns(r, fieldsOf('scoringRules')) as unknown as ScoringRuleFields) });

export async function listScoringRules(knex: Knex, tenantId: string) {
  const rows = await liveRows(knex, 'scoring_rules', 'r', tenantId).orderBy([{ column: 'r.sort_order' }, { column: 'r.created_at' }, { column: 'r.id' }]).select('r.*');
  return rows.map(ruleShape);
}

export async function getScoringRule(knex: Knex, tenantId: string, id: string) {
  const row = await liveRows(knex, 'scoring_rules', 'r', tenantId).where('r.id', id).first('r.*');
  return row ? ruleShape(row) : null;
}

// ---------------------------------------------------------------------------------------
// Qualification frameworks

const frameworkShape = (r: any) => {
  const framework = fromColumns(r, fieldsOf('qualificationFrameworks')) as unknown as QualificationFrameworkFields;
  return { id: r.id as string, ...framework, fields: [...framework.fields].sort((a, b) => a.sortOrder - b.sortOrder) };
};

export async function listQualificationFrameworks(knex: Knex, tenantId: string) {
  const rows = await liveRows(knex, 'qualification_frameworks', 'q', tenantId).orderBy([{ column: 'q.sort_order' }, { column: 'q.name' }]).select('q.*');
  return rows.map(frameworkShape);
}

export async function getQualificationFramework(knex: Knex, tenantId: string, id: string) {
  const row = await liveRows(knex, 'qualification_frameworks', 'q', tenantId).where('q.id', id).first('q.*');
  return row ? frameworkShape(row) : null;
}

// ---------------------------------------------------------------------------------------
// Keyed settings

export type LeadSettingsValues = { [K in SettingKey]: (typeof DEFAULT_SETTINGS)[K] };

/** Every setting key, its stored value over its defaults (a key never stored reads as its defaults). */
export async function getLeadSettingValues(knex: Knex, tenantId: string): Promise<LeadSettingsValues> {
  const rows: { key: string; value: Record<string, unknown> }[] = await knex('lead_settings').where('tenant_id', tenantId).select('key', 'value');
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  return Object.fromEntries(SETTING_KEYS.map((key) => [key, { ...DEFAULT_SETTINGS[key], ...(stored.get(key) ?? {}) }])) as LeadSettingsValues;
}

export async function getQualificationThreshold(knex: Knex, tenantId: string): Promise<QualificationThreshold> {
  const row = await knex('lead_settings').where({ tenant_id: tenantId, key: 'qualificationThreshold' }).first('value');
  const { threshold, autoQualify } = { ...DEFAULT_SETTINGS.qualificationThreshold, ...(row?.value ?? {}) };
  return { threshold, autoQualify };
}

import type { Knex } from 'knex';
import { deterministicId } from '../infra/deterministic-id.js';
import { listScoringRules } from './lead-settings.js';

type Rule = Awaited<ReturnType<typeof listScoringRules>>[number];

/** The ceiling a lead's score is clamped to (scoreLead's default, the one leads are scored with). */
export const MAX_SCORE = 100;

/** The id of a tenant's one scoring template: derived from the tenant, so it never changes. */
export const scoringTemplateId = (tenantId: string) => deterministicId('lead-scoring-template', tenantId);

/**
 * `GET /lead-settings/scoring`, the web client's scoring page: the reference groups rules
 * into templates; this service scores every lead with one set of rules (the spec's
 * `/scoring-rules`), so a tenant has exactly one template, active and default, holding all
 * of them (each rule with its `templateId`).
 */
export async function scoringTemplates(knex: Knex, tenantId: string) {
  const id = scoringTemplateId(tenantId);
  const rules = await listScoringRules(knex, tenantId);
  return [
    {
      id,
      name: 'Lead scoring',
      description: 'The rules every lead is scored with',
      isActive: true,
      isDefault: true,
      maxScore: MAX_SCORE,
      rules: rules.map((rule: Rule) => ({ ...rule, templateId: id })),
    },
  ];
}

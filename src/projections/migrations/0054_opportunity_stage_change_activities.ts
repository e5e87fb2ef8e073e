import type { Knex } from 'knex';

/**
 * Opportunities' stage moves were `stage_changed` activities; every kind now writes the
 * spec's `stage_change` (as leads always did). The rows already projected are renamed, so
 * a live timeline reads as a rebuild of the `record-timeline` projection would.
 */
export const migration0054OpportunityStageChangeActivities = {
  name: '0054_opportunity_stage_change_activities',
  async up(knex: Knex) {
    await knex('record_activities').where({ record_type: 'opportunity', activity_type: 'stage_changed' }).update({ activity_type: 'stage_change' });
  },
  async down(knex: Knex) {
    await knex('record_activities').where({ record_type: 'opportunity', activity_type: 'stage_change' }).update({ activity_type: 'stage_changed' });
  },
};

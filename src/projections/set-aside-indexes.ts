import type { Knex } from 'knex';

/*
 * Rebuilds before 2026-11-24 dropped the live tables' secondary indexes for the replay,
 * keeping their definitions in `projection_rebuilds` until they were built again. Rebuilds
 * now replay into shadow tables (rebuild.ts); this only restores what an interrupted
 * rebuild of the old kind left behind, when its projection next starts.
 */

interface IndexDefinition {
  name: string;
  definition: string;
}

/**
 * Builds again the indexes a rebuild set aside, if one was under way (finished or
 * interrupted). Runners call it before they start, so a crash mid-rebuild loses no index.
 */
export async function restoreSetAsideIndexes(knex: Knex, projectionName: string): Promise<void> {
  await knex.transaction(async (trx) => {
    const row = await trx('projection_rebuilds').where({ name: projectionName }).forUpdate().first();
    if (!row) return;
    for (const index of row.index_definitions as IndexDefinition[]) {
      const exists = await trx.raw('select to_regclass(?) as oid', [index.name]);
      if (!exists.rows[0].oid) await trx.raw(index.definition);
    }
    await trx('projection_rebuilds').where({ name: projectionName }).delete();
  });
}

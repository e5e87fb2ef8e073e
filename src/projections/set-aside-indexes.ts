import type { Knex } from 'knex';

/*
 * A rebuild writes every row of its tables again; keeping secondary indexes up to date
 * row by row roughly doubles the cost, so they are dropped for the replay and built once
 * at the end. Their definitions wait in `projection_rebuilds`, committed with the drop,
 * so an interrupted rebuild gets them back when its projection next starts.
 */

interface IndexDefinition {
  name: string;
  definition: string;
}

/** Indexes of the tables that back no constraint (primary keys and unique constraints stay). */
async function secondaryIndexes(trx: Knex.Transaction, tables: string[]): Promise<IndexDefinition[]> {
  if (tables.length === 0) return [];
  const { rows } = await trx.raw(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = any(?::regclass[])
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
    // A PostgreSQL array literal: knex would spread a JS array into a list of parameters.
    [`{${tables.join(',')}}`],
  );
  return rows;
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

/** Drops the tables' secondary indexes, keeping their definitions (with any kept before). */
export async function setAsideIndexes(trx: Knex.Transaction, projectionName: string, tables: string[]): Promise<void> {
  const indexes = await secondaryIndexes(trx, tables);
  if (indexes.length === 0) return;
  const earlier = await trx('projection_rebuilds').where({ name: projectionName }).first();
  const all = [...((earlier?.index_definitions as IndexDefinition[]) ?? []), ...indexes];
  await trx('projection_rebuilds').insert({ name: projectionName, index_definitions: JSON.stringify(all) }).onConflict('name').merge();
  for (const index of indexes) await trx.raw('drop index ??', [index.name]);
}

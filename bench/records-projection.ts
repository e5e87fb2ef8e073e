import type { Knex } from 'knex';
import type { RecordedEvent } from '../src/events/store/types.js';
import type { DomainEvent } from '../src/events/domain-event.js';
import { defineProjection } from '../src/projections/projection.js';
import { RECORD_CREATED, RECORD_UPDATED, type RecordEventData } from './record-events.js';

const TABLE = 'bench_records';

/** A module's read model as it will look: one row per record, with an index a list page would use. */
export async function createRecordsTable(knex: Knex): Promise<void> {
  await knex.raw(`create table ${TABLE} (
    record_id uuid primary key,
    tenant_id text not null,
    name text not null,
    email text,
    phone text,
    company text,
    status text not null,
    owner_id uuid,
    source text,
    score int,
    city text,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`);
  await knex.raw(`create index ${TABLE}_tenant_name on ${TABLE} (tenant_id, name, record_id)`);
}

export async function countRecords(knex: Knex): Promise<number> {
  const row = await knex(TABLE).count<{ count: number }>('* as count').first();
  return Number(row?.count ?? 0);
}

/** Everything an update may change. */
function editableColumns(event: RecordedEvent<RecordEventData>): Record<string, unknown> {
  const d = event.data;
  return {
    name: d.name,
    email: d.email,
    phone: d.phone,
    company: d.company,
    status: d.status,
    owner_id: d.ownerId,
    source: d.source,
    score: d.score,
    city: d.city,
    updated_at: event.createdAt,
  };
}

/**
 * The shape real module projections will have: a create inserts the row, an update
 * patches it; the batch's writer folds what each page says about a row and writes it
 * with a few bulk statements (insert / update … from json_to_recordset).
 */
type BenchRecordEvent = DomainEvent<typeof RECORD_CREATED, RecordEventData> | DomainEvent<typeof RECORD_UPDATED, RecordEventData>;

export const recordsProjection = defineProjection<BenchRecordEvent>({
  name: 'bench-records',
  tables: [TABLE],
  handlers: {
    [RECORD_CREATED]: (e, write) =>
      write.insert(TABLE, {
        record_id: e.data.recordId,
        tenant_id: e.metadata.tenantId,
        ...editableColumns(e),
        created_at: e.createdAt,
      }),
    [RECORD_UPDATED]: (e, write) => write.update(TABLE, { record_id: e.data.recordId }, editableColumns(e)),
  },
});

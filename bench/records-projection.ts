import type { Knex } from 'knex';
import type { RecordedEvent } from '../src/events/store/types.js';
import type { Projection } from '../src/projections/projection.js';
import { insertRows, type ColumnTypes } from '../src/projections/sql.js';
import { RECORD_CREATED, RECORD_UPDATED, type RecordEventData } from './record-events.js';

const TABLE = 'bench_records';

/** Everything an update may change; insert adds the keys and `created_at`. */
const EDITABLE_COLUMNS: ColumnTypes = {
  name: 'text',
  email: 'text',
  phone: 'text',
  company: 'text',
  status: 'text',
  owner_id: 'uuid',
  source: 'text',
  score: 'int',
  city: 'text',
  updated_at: 'timestamptz',
};
const INSERT_COLUMNS: ColumnTypes = { record_id: 'uuid', tenant_id: 'text', ...EDITABLE_COLUMNS, created_at: 'timestamptz' };
const UPDATE_COLUMNS: ColumnTypes = { record_id: 'uuid', ...EDITABLE_COLUMNS };

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

function editableRow(event: RecordedEvent<RecordEventData>): Record<string, unknown> {
  const d = event.data;
  return {
    record_id: d.recordId,
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

/** `update … from jsonb_to_recordset`: many rows, one statement, one parameter. */
async function updateRows(trx: Knex.Transaction, key: string, columns: ColumnTypes, rows: Record<string, unknown>[]): Promise<void> {
  const names = Object.keys(columns);
  const definition = names.map((n) => `${n} ${columns[n]}`).join(', ');
  const assignments = names.filter((n) => n !== key).map((n) => `${n} = x.${n}`).join(', ');
  await trx.raw(`update ${TABLE} as t set ${assignments} from jsonb_to_recordset(?::jsonb) as x(${definition}) where t.${key} = x.${key}`, [
    JSON.stringify(rows),
  ]);
}

/** The shape real module projections will have: bulk insert on create, bulk update on change. */
export const recordsProjection: Projection = {
  name: 'bench-records',
  tables: [TABLE],
  handlers: {
    [RECORD_CREATED]: async (trx, events: RecordedEvent<RecordEventData>[]) => {
      await insertRows(
        trx,
        TABLE,
        INSERT_COLUMNS,
        events.map((e) => ({ ...editableRow(e), tenant_id: e.metadata.tenantId, created_at: e.createdAt })),
      );
    },
    [RECORD_UPDATED]: async (trx, events: RecordedEvent<RecordEventData>[]) => {
      // `update … from` applies at most one source row per target row, so fold the run
      // first: the last update of each record in log order is the one that counts.
      const latest = new Map<string, RecordedEvent<RecordEventData>>();
      for (const event of events) latest.set(event.data.recordId, event);
      await updateRows(trx, 'record_id', UPDATE_COLUMNS, [...latest.values()].map(editableRow));
    },
  },
};

import { randomUUID } from 'node:crypto';
import type { AppendResult, EventStore, NewEvent } from '../src/events/store/types.js';

export const RECORD_CREATED = 'BenchRecordCreated';
export const RECORD_UPDATED = 'BenchRecordUpdated';

/** What a CRM contact roughly carries: small values, ten fields with the id. */
export interface RecordFields {
  name: string;
  email: string;
  phone: string;
  company: string;
  status: string;
  ownerId: string;
  source: string;
  score: number;
  city: string;
}

/** Both event types carry the full editable state, so the last update of a record wins. */
export interface RecordEventData extends RecordFields {
  recordId: string;
}

export const TENANTS: string[] = Array.from({ length: 5 }, () => randomUUID());
const OWNERS = Array.from({ length: 20 }, () => randomUUID());
const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka'];
const STATUSES = ['new', 'contacted', 'qualified', 'customer', 'lost'];
const SOURCES = ['web', 'referral', 'import', 'event', 'cold_call'];
const CITIES = ['Berlin', 'Lyon', 'Porto', 'Leeds', 'Graz', 'Turin', 'Ghent', 'Malmo'];

export const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];

function randomFields(): RecordFields {
  const n = Math.floor(Math.random() * 1_000_000);
  return {
    name: `Contact ${n}`,
    email: `contact${n}@example.com`,
    phone: `+44 20 7946 ${String(n % 10000).padStart(4, '0')}`,
    company: pick(COMPANIES),
    status: pick(STATUSES),
    ownerId: pick(OWNERS),
    source: pick(SOURCES),
    score: n % 101,
    city: pick(CITIES),
  };
}

export function recordEvent(type: typeof RECORD_CREATED | typeof RECORD_UPDATED, recordId: string, tenantId: string): NewEvent<RecordEventData> {
  return {
    id: randomUUID(),
    type,
    data: { recordId, ...randomFields() },
    metadata: { tenantId, userId: pick(OWNERS), correlationId: randomUUID(), causationId: null },
    createdAt: new Date(),
  };
}

interface OwnRecord {
  streamId: string;
  recordId: string;
  tenantId: string;
  revision: number;
}

/** One in this many commands creates a record; the others update one. */
const CREATE_EVERY = 4;

/**
 * One writer issuing CRM commands, one event each, as a command handler would: a create
 * appends to a new stream with `no_stream`, an update appends to one of this writer's
 * records at the revision it last saw (so writers never conflict with each other).
 */
export class RecordCommands {
  static readonly mix = `1 in ${CREATE_EVERY} new streams (no_stream), the rest own streams at exact revision`;
  private readonly records: OwnRecord[] = [];
  private issued = 0;

  constructor(private readonly store: EventStore) {}

  async next(): Promise<AppendResult> {
    if (this.issued++ % CREATE_EVERY === 0) return this.create();
    return this.update(pick(this.records));
  }

  private async create(): Promise<AppendResult> {
    const recordId = randomUUID();
    const tenantId = pick(TENANTS);
    const streamId = `BenchRecord-${recordId}`;
    const result = await this.store.appendToStream(streamId, [recordEvent(RECORD_CREATED, recordId, tenantId)], {
      expectedRevision: 'no_stream',
    });
    this.records.push({ streamId, recordId, tenantId, revision: result.nextExpectedRevision });
    return result;
  }

  private async update(record: OwnRecord): Promise<AppendResult> {
    const result = await this.store.appendToStream(record.streamId, [recordEvent(RECORD_UPDATED, record.recordId, record.tenantId)], {
      expectedRevision: record.revision,
    });
    record.revision = result.nextExpectedRevision;
    return result;
  }
}

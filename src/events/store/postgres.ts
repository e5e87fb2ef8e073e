import pg from 'pg';
import { Observable, Subject } from 'rxjs';
import type { Logger } from 'pino';
import { ListenerPresence } from '../../infra/listener-presence.js';
import { PgListener } from '../../infra/pg-listener.js';
import { sleep } from '../../infra/signal.js';
import { catchUpSubscription } from './catch-up.js';
import { GroupCommitter, type GroupMember } from './group-commit.js';
import { RecentPages } from './recent-pages.js';
import { answerable, carriedRead, CarriedStatements, type CarriedRead } from './carried-reads.js';
import { readAlongNow, type ReadAlong } from './read-along.js';
import { writeAlongNow, type WriteAlong } from './write-along.js';
import { PreparedWrites, type InlineStatement } from './prepared-writes.js';
import { EVENT_STORE_SCHEMA } from './postgres-schema.js';
import { withLiterals } from '../../infra/simple-query.js';
import { eventVersions } from '../upcasters.js';
import type { EventVersions } from '../versions.js';
import {
  DuplicateEventIdError,
  StaleFactsError,
  WrongExpectedRevisionError,
  type AppendOptions,
  type AppendResult,
  type EventFilter,
  type EventStore,
  type ExpectedRevision,
  type LogPage,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamFact,
} from './types.js';

const CHANNEL = 'crm_events_appended';
const LISTENER_PREFIX = 'crm-events-listener-';
/**
 * The appends' own statements call the PL/pgSQL functions themselves, not their SQL wrappers
 * (`es_append`, `es_append_group`): PostgreSQL 17 plans a SQL function's body again on every
 * call, while a named statement is planned once per connection. Single-event appends, 8
 * writers: 58 -> 63 % of the raw commit rate.
 */
const APPEND_SQL =
  'select e.revision as last_revision, e.tx_id, e.event_position as last_position from es_append_events(false, $1, $2, $3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::timestamptz[], $8::jsonb, $9::text[]) e order by e.revision desc limit 1';
const APPEND_GROUP_SQL =
  'select member, status, revision, tx_id, positions from es_append_group_events(false, $1::text[], $2::bigint[], $3::int[], $4::uuid[], $5::text[], $6::jsonb, $7::jsonb, $8::timestamptz[], $9::jsonb, $10::jsonb)';
/** The appends of a transaction that applies inline projections: every event's position, and the projections' names. */
const APPEND_EVENTS_SQL =
  'select * from es_append_events(true, $1, $2, $3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::timestamptz[], $8::jsonb, $9::text[])';
const APPEND_GROUP_EVENTS_SQL =
  'select * from es_append_group_events(true, $1::text[], $2::bigint[], $3::int[], $4::uuid[], $5::text[], $6::jsonb, $7::jsonb, $8::timestamptz[], $9::jsonb, $10::jsonb)';
/**
 * Group commit: at most two group transactions at once; appends that arrive meanwhile wait
 * and go together in the next one (a bench of 8 writers: groups of about 8).
 */
const GROUP_COMMIT = { maxInFlight: 2, maxGroupSize: 1000 };
/** Events of recent log pages a process keeps for readers behind (a few MB: pages of small events). */
const RECENT_PAGE_EVENTS = 20_000;
// Aliases differ from column names on purpose: ORDER BY a bare name would otherwise
// sort by the text alias ("1005" < "988") instead of the column.
const EVENT_COLUMNS = `position::text as position_text, tx_id::text as tx_text, event_id, stream_id,
  stream_revision::int as revision, type, data, metadata, created_at, schema_version`;

/**
 * Events after ($1, $2) below the read horizon (see es_read_horizon in postgres-schema.ts),
 * at most $3. When none is readable but some later event is committed, that first event
 * comes back alone, marked `held`: the caller learns that events are held back, in the
 * same round trip and without a second ordered scan. Every row also says whether any
 * committed event after the page is held back (`held_after`): a page that is not full and
 * has none is all a reader can have until the next append.
 *
 * `matching` narrows both scans to a filter's events (a tenant: `events_tenant_order`
 * serves it as an index range; types: checked on the rows). The horizon stays the whole
 * log's, so a filtered reader skips nothing an unfiltered one would hand out later.
 */
function readPageSql(matching = ''): string {
  return `
  with h as materialized (
    select es_read_horizon(pg_current_snapshot(), $1::text::xid8, $2::bigint) as horizon
  ), r as materialized (
    -- Not EXISTS: the planner drops ORDER BY from it and may then scan the table.
    select coalesce((select true from events
                      where (tx_id, position) > ($1::text::xid8, $2::bigint) and tx_id < (select horizon from h)${matching}
                      order by tx_id, position limit 1), false) as readable
  ), x as materialized (
    -- Committed events past the horizon: the page is not all there is, even when it is not full.
    -- Started at the later of the reader's position and the horizon, as one row bound (see
    -- es_read_horizon): else the scan walks every event from a reader far behind.
    select coalesce((select true from events
                      where (tx_id, position) > (greatest($1::text::xid8, (select horizon from h)),
                                                 case when (select horizon from h) > $1::text::xid8 then -1 else $2::bigint end)
                        and tx_id >= (select horizon from h)${matching}
                      order by tx_id, position limit 1), false) as held_after
  )
  select ${EVENT_COLUMNS}, tx_id >= (select horizon from h) as held, (select held_after from x) as held_after
    from events
   where (tx_id, position) > ($1::text::xid8, $2::bigint)${matching}
     and tx_id < (select case when r.readable then h.horizon else pg_snapshot_xmax(pg_current_snapshot()) end from h, r)
   order by tx_id, position
   limit (select case when r.readable then $3::bigint else 1 end from r)`;
}

const READ_PAGE_SQL = readPageSql();
/** One statement per filter shape (tenant, types, both), each prepared once per connection. */
const FILTERED_READ_SQL = {
  tenant: readPageSql(` and (metadata->>'tenantId') = $4::text`),
  types: readPageSql(` and type = any($4::text[])`),
  both: readPageSql(` and (metadata->>'tenantId') = $4::text and type = any($5::text[])`),
};

/** The filter a read applies, or undefined when it filters nothing. */
const readFilter = (filter: EventFilter | undefined) => (filter && (filter.tenantId !== undefined || filter.types !== undefined) ? filter : undefined);

/** The statement reading one page of the log after `from` (filtered or not): see readPageSql. */
export function readPageQuery(from: Position, maxCount: number, filter: EventFilter | undefined): pg.QueryConfig {
  return filter
    ? filteredQuery(from, maxCount, filter)
    : { name: 'es_read_page', text: READ_PAGE_SQL, values: [from.commit.toString(), from.prepare.toString(), maxCount] };
}

function filteredQuery(from: Position, maxCount: number, filter: EventFilter): pg.QueryConfig {
  const shape = filter.tenantId === undefined ? 'types' : filter.types === undefined ? 'tenant' : 'both';
  const values: unknown[] = [from.commit.toString(), from.prepare.toString(), maxCount];
  if (filter.tenantId !== undefined) values.push(filter.tenantId);
  if (filter.types !== undefined) values.push(filter.types);
  return { name: `es_read_page_${shape}`, text: FILTERED_READ_SQL[shape], values };
}

interface EventRow {
  position_text: string;
  tx_text: string;
  event_id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
  created_at: Date;
  schema_version: number;
}

function toRecorded(row: EventRow, versions: EventVersions): RecordedEvent {
  return versions.upcast({
    id: row.event_id,
    type: row.type,
    streamId: row.stream_id,
    revision: row.revision,
    position: { commit: BigInt(row.tx_text), prepare: BigInt(row.position_text) },
    data: row.data,
    metadata: row.metadata,
    createdAt: row.created_at,
    schemaVersion: row.schema_version,
  });
}

/**
 * Metadata as an append hands it to SQL, as JSON: with the version the event is written in
 * (moved to its own column there). Added as the last key, without copying the object: jsonb
 * keeps the last of two equal keys.
 */
function metadataJsonOf(event: NewEvent, versions: EventVersions): string {
  const json = JSON.stringify(event.metadata ?? {});
  const version = `"schemaVersion":${versions.current(event.type)}}`;
  return json.length > 2 ? `${json.slice(0, -1)},${version}` : `{${version}`;
}

function expectedAsNumber(expected: ExpectedRevision): number {
  if (expected === 'any') return -2;
  if (expected === 'no_stream') return -1;
  return expected;
}

/**
 * The append statement (one round trip). Exported so that tests can append inside a
 * transaction of their own; it must be that transaction's first write (see es_append_events).
 */
export function appendQuery(
  streamId: string,
  events: NewEvent[],
  expected: ExpectedRevision,
  versions: EventVersions = eventVersions,
  facts?: readonly StreamFact[],
  guards?: readonly string[],
): pg.QueryConfig {
  const values = [
    streamId,
    expectedAsNumber(expected),
    events.map((e) => e.id),
    events.map((e) => e.type),
    events.map(dataJsonOf),
    events.map((e) => metadataJsonOf(e, versions)),
    events.map((e) => e.createdAt.toISOString()),
    facts?.length ? factsJson(facts) : null,
    guards?.length ? [...guards] : null,
  ];
  return { name: 'es_append', text: APPEND_SQL, values };
}

/** Facts as es_unchanged takes them: [stream, revision] pairs. */
const factsJson = (facts: readonly StreamFact[]) => JSON.stringify(facts.map((f) => [f.streamId, f.revision]));

interface AppendRequest {
  events: NewEvent[];
  expectedRevision: ExpectedRevision;
  facts?: readonly StreamFact[];
  guards?: readonly string[];
  /** The caller's read to answer in the append's transaction (inline projections only). */
  along?: ReadAlong;
  /** The caller's row to store in the append's transaction (inline projections, in a group only). */
  write?: WriteAlong;
}

type PendingAppend = GroupMember<AppendRequest>;

interface GroupRow {
  member: number;
  status: 'ok' | 'wrong_revision' | 'busy' | 'stale';
  /** bigint: a number or its text, depending on the pool's type parsers. */
  revision: number | string | null;
  tx_id: string | null;
  /** The member's event positions, a JSON array in revision order (null unless ok). */
  positions: string | null;
}

/**
 * An append whose usage guard an exclusive holder has (CR004: nothing written) tries again
 * after a pause, holding no connection meanwhile, as `alongside` waits.
 */
async function whileGuardHeld<T>(append: () => Promise<T>): Promise<T> {
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      return await append();
    } catch (error) {
      if ((error as { code?: string }).code !== 'CR004') throw error;
    }
    await sleep(pause);
  }
}

/**
 * Each member's facts (none: [], es_unchanged holds for them). A fact on a stream an earlier
 * member appends to gets that member's number (1-based) third: es_append_group_events checks it
 * against what that member writes in the same transaction (a companion append, see
 * src/commands/companion-append.ts), where the log's head would not show it yet.
 */
function groupFactsJson(group: readonly PendingAppend[]): string {
  const memberOf = new Map(group.map((m, i) => [m.streamId, i + 1]));
  const json = group.map((m, i) =>
    JSON.stringify(
      (m.request.facts ?? []).map((f) => {
        const member = memberOf.get(f.streamId);
        return member !== undefined && member <= i ? [f.streamId, f.revision, member] : [f.streamId, f.revision];
      }),
    ),
  );
  return `[${json.join(',')}]`;
}

const staleFacts = (request: AppendRequest) => new StaleFactsError((request.facts ?? []).map((f) => f.streamId));

function groupQuery(group: readonly PendingAppend[], versions: EventVersions, inline = false): pg.QueryConfig {
  const events = group.flatMap((m) => m.request.events);
  const values = [
    group.map((m) => m.streamId),
    group.map((m) => expectedAsNumber(m.request.expectedRevision)),
    group.map((m) => m.request.events.length),
    events.map((e) => e.id),
    events.map((e) => e.type),
    // Only inline projections read an event's data JSON again (recordedOf): kept for them alone.
    `[${events.map(inline ? dataJsonOf : dataJsonOnce).join(',')}]`,
    `[${events.map((e) => metadataJsonOf(e, versions)).join(',')}]`,
    events.map((e) => e.createdAt.toISOString()),
    group.some((m) => m.request.facts?.length) ? groupFactsJson(group) : null,
    group.some((m) => m.request.guards?.length) ? JSON.stringify(group.map((m) => m.request.guards ?? [])) : null,
  ];
  return inline
    ? { name: 'es_append_group_events', text: APPEND_GROUP_EVENTS_SQL, values }
    : { name: 'es_append_group_plain', text: APPEND_GROUP_SQL, values };
}

/**
 * Works out the inline projections' writes for the events of an append (see
 * src/projections/inline.ts): handlers only state writes, so no query is needed. The store
 * sends them, with the append, in one transaction: `begin; <append>` in one round trip,
 * `<writes>; commit` in a second. Anything that fails undoes the append with them.
 */
export interface InlineApplier {
  /** Whatever `sqlFor` needs from the read-model pool, read before the append takes a connection (the first call reads it). */
  ready(): Promise<void>;
  /** The named projections' writes for these events, in order (none: nothing to write). */
  sqlFor(projections: string[], events: RecordedEvent[]): Promise<InlineStatement[]>;
}

interface AppendEventsRow {
  revision: string | number;
  tx_id: string;
  event_position: string | number;
  inline_projections: string[];
}

interface GroupEventsRow {
  member: number;
  status: GroupRow['status'];
  revision: number | string | null;
  tx_id: string | null;
  /** JSON array of the member's event positions, revision order. */
  positions: string | null;
  inline_projections: string[];
}

/**
 * A value as jsonb keeps it and a read gives it back: through JSON (dates as text, no
 * undefined), object keys in jsonb's order (shorter first, then bytewise). Inline
 * projections get the events as a rebuild will read them, so both write the same rows.
 */
export function asStored(value: unknown): unknown {
  return sortKeys(JSON.parse(JSON.stringify(value) ?? 'null'));
}

/** Each event's data as the JSON an append sends, made once: the inline projections' copy (`recordedOf`) parses the same text. */
const dataJson = new WeakMap<NewEvent, string>();

/** An event's data as JSON, not kept (appends no inline projection reads back). */
const dataJsonOnce = (event: NewEvent): string => JSON.stringify(event.data) ?? 'null';

function dataJsonOf(event: NewEvent): string {
  let json = dataJson.get(event);
  if (json === undefined) {
    json = dataJsonOnce(event);
    dataJson.set(event, json);
  }
  return json;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

const byJsonbKeyOrder = (a: string, b: string) => {
  // ASCII keys (nearly all): characters are bytes, so length and code-unit order are jsonb's.
  if (ASCII_ONLY.test(a) && ASCII_ONLY.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
};

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byJsonbKeyOrder)) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** The events of one append as stored (and as a read gives them back), from the positions the append answered. */
function recordedOf(
  streamId: string,
  events: NewEvent[],
  lastRevision: number,
  txId: string,
  positions: (string | number)[],
  versions: EventVersions,
): RecordedEvent[] {
  const first = lastRevision - events.length + 1;
  return events.map((e, i) => ({
    ...e,
    data: sortKeys(JSON.parse(dataJsonOf(e))),
    metadata: asStored(e.metadata) as NewEvent['metadata'],
    streamId,
    revision: first + i,
    position: { commit: BigInt(txId), prepare: BigInt(positions[i]) },
    schemaVersion: versions.current(e.type),
  }));
}

/** The default event store: one table in PostgreSQL, woken across processes by LISTEN/NOTIFY. */
export class PostgresEventStore implements EventStore {
  readonly name = 'postgres';
  readonly holdsGuards = true;
  private readonly appended = new Subject<void>();
  readonly appended$: Observable<void> = this.appended.asObservable();
  private listener: PgListener | null = null;
  private notifyInFlight = false;
  private notifyPending = false;
  private closed = false;
  /** Whether another process listens for appends (then, and only then, we NOTIFY). */
  private readonly presence: ListenerPresence;
  private readonly groupCommit = new GroupCommitter<AppendRequest, AppendResult>((group) => this.commitGroup(group), GROUP_COMMIT);
  /** Set once inline projections are switched on: every append then applies them in its transaction. */
  private inline: InlineApplier | null = null;
  private readonly carried = new CarriedStatements();
  private readonly preparedWrites = new PreparedWrites();

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger?: Logger,
    /** The upcasters reads apply and the versions appends stamp (tests hand in their own). */
    private readonly versions: EventVersions = eventVersions,
  ) {
    this.presence = new ListenerPresence(pool, LISTENER_PREFIX);
  }

  /** Creates the schema (idempotent, serialised across processes) and starts listening. */
  async init(options: { listen?: boolean } = {}): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      await client.query(`select pg_advisory_xact_lock(hashtext('crm:event-store-schema'))`);
      await client.query(EVENT_STORE_SCHEMA);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    if (options.listen !== false) {
      const connection = (this.pool as unknown as { options: pg.ClientConfig }).options;
      this.listener = new PgListener({
        connection: { ...connection, application_name: this.presence.ownName },
        channel: CHANNEL,
        onNotification: () => this.wake(),
        logger: this.logger,
        what: 'event store',
      });
      await this.listener.start();
    }
  }

  /**
   * Concurrent appends share a transaction (see GroupCommitter): each is still checked
   * against its own expected revision and fails, if it does, alone.
   */
  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const along = this.inline ? readAlongNow() : undefined;
    const write = this.inline ? writeAlongNow() : undefined;
    return this.groupCommit.submit(streamId, { events, expectedRevision: options.expectedRevision, facts: options.facts, guards: options.guards, along, write }, events.length);
  }

  /** From now on, every append of this store applies the inline projections in its own transaction (null: no longer). */
  applyInline(applier: InlineApplier | null): void {
    this.inline = applier;
  }

  private async commitGroup(group: readonly PendingAppend[]): Promise<Promise<AppendResult>[]> {
    if (this.inline) return this.commitGroupInline(group, this.inline);
    if (group.length === 1) {
      // Still a commit slot's work: held until it is done.
      const alone = this.appendAlone(group[0]);
      await alone.catch(() => undefined);
      return [alone];
    }
    let rows: GroupRow[];
    try {
      rows = (await this.pool.query<GroupRow>(groupQuery(group, this.versions))).rows;
    } catch {
      // The whole group was undone (a duplicate event id, a retried append with `any`,
      // a lost connection): each member alone gets its own answer.
      return group.map((member) => this.appendAlone(member));
    }
    if (rows.some((row) => row.status === 'ok')) this.wakeReaders();
    // One row per member, in member order.
    return group.map((member, i) => {
      const row = rows[i];
      if (row.status === 'ok') {
        const positions: (string | number)[] = JSON.parse(row.positions!);
        const position = { commit: BigInt(row.tx_id!), prepare: BigInt(positions[positions.length - 1]) };
        return Promise.resolve({ nextExpectedRevision: Number(row.revision), position });
      }
      if (row.status === 'busy') return this.appendAlone(member);
      if (row.status === 'stale') return this.refused(member, staleFacts(member.request));
      const actual = row.revision === null ? 'no_stream' : Number(row.revision);
      return this.refused(member, new WrongExpectedRevisionError(member.streamId, member.request.expectedRevision, actual));
    });
  }

  /**
   * The group in one transaction that also applies the inline projections to what it
   * appended (a group of one too: the group statement never waits for a stream lock). When
   * that transaction fails as a whole, each member goes alone and gets its own answer.
   */
  private async commitGroupInline(group: readonly PendingAppend[], inline: InlineApplier): Promise<Promise<AppendResult>[]> {
    let rows: GroupEventsRow[];
    const reads = group.map((member) => carriedRead(member.request.along, member.streamId));
    try {
      rows = await this.inTransaction<GroupEventsRow, GroupEventsRow[]>(inline, groupQuery(group, this.versions, true), reads, (found, ready) => {
        const events = group.flatMap((member, i) => {
          const row = found[i];
          if (row.status !== 'ok') return [];
          return recordedOf(member.streamId, member.request.events, Number(row.revision), row.tx_id!, JSON.parse(row.positions!), this.versions);
        });
        const projections = found[0]?.inline_projections ?? [];
        const along = reads.filter((read, i): read is CarriedRead => !!read && found[i].status === 'ok' && ready.has(read) && answerable(read, projections));
        const writes = group.flatMap((member, i) => (member.request.write && found[i].status === 'ok' ? [member.request.write] : []));
        return { value: found, events, projections, along, writes };
      });
    } catch {
      return group.map((member) => this.appendAloneInline(member, inline));
    }
    if (rows.some((row) => row.status === 'ok')) this.wakeReaders();
    return group.map((member, i) => {
      const row = rows[i];
      if (row.status === 'ok') {
        const positions: (string | number)[] = JSON.parse(row.positions!);
        return Promise.resolve({ nextExpectedRevision: Number(row.revision), position: { commit: BigInt(row.tx_id!), prepare: BigInt(positions[positions.length - 1]) } });
      }
      if (row.status === 'busy') return this.appendAloneInline(member, inline);
      if (row.status === 'stale') return this.refused(member, staleFacts(member.request));
      const actual = row.revision === null ? 'no_stream' : Number(row.revision);
      return this.refused(member, new WrongExpectedRevisionError(member.streamId, member.request.expectedRevision, actual));
    });
  }

  /** One append and its inline projections in a transaction of their own (waits for the stream's lock). */
  private appendAloneInline(member: PendingAppend, inline: InlineApplier): Promise<AppendResult> {
    return whileGuardHeld(() => this.appendAloneInlineOnce(member, inline));
  }

  private async appendAloneInlineOnce({ streamId, request }: PendingAppend, inline: InlineApplier): Promise<AppendResult> {
    let result: AppendResult;
    try {
      const query = { ...appendQuery(streamId, request.events, request.expectedRevision, this.versions, request.facts, request.guards), name: 'es_append_events', text: APPEND_EVENTS_SQL };
      result = await this.inTransaction<AppendEventsRow, AppendResult>(inline, query, [], (rows) => {
        const last = rows[rows.length - 1];
        const events = recordedOf(streamId, request.events, Number(last.revision), last.tx_id, rows.map((r) => r.event_position), this.versions);
        const value = { nextExpectedRevision: Number(last.revision), position: { commit: BigInt(last.tx_id), prepare: BigInt(last.event_position) } };
        return { value, events, projections: last.inline_projections };
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'CR003') return this.refused({ streamId, request }, staleFacts(request));
      if (code !== 'CR001' && code !== '23505') throw error;
      return this.refused({ streamId, request }, this.translate(error, streamId, request.expectedRevision));
    }
    this.wakeReaders();
    return result;
  }

  /**
   * One inline transaction on a pooled connection, in two round trips: the append (after
   * `begin`), then the projections' writes for what it appended, the rows written along and
   * the reads carried (before `commit`). A write along that fails undoes the transaction
   * (a group's members then go alone, carrying none).
   */
  private async inTransaction<Row extends pg.QueryResultRow, T>(
    inline: InlineApplier,
    append: pg.QueryConfig,
    reads: readonly (CarriedRead | null)[],
    appended: (rows: Row[], ready: ReadonlySet<CarriedRead>) => { value: T; events: RecordedEvent[]; projections: string[]; along?: CarriedRead[]; writes?: WriteAlong[] },
  ): Promise<T> {
    // Never wait for the read-model pool while holding a connection of this one.
    await inline.ready();
    const client = await this.pool.connect();
    let preparing: string[] = [];
    try {
      const ready = reads.some(Boolean) ? await this.carried.ready(client, reads.filter((r): r is CarriedRead => !!r)) : new Set<CarriedRead>();
      const results = (await client.query(`begin; ${withLiterals(append)}`)) as unknown as pg.QueryResult<Row>[];
      const { value, events, projections, along = [], writes = [] } = appended(results[1].rows, ready);
      const projected = this.preparedWrites.textFor(client, events.length ? await inline.sqlFor(projections, events) : []);
      preparing = projected.preparing;
      // The reads go after the writes, before the commit: they see the transaction's own rows.
      const text = [projected.text, ...writes.map((w) => w.sql), ...along.map((a) => a.execute), 'commit'].filter(Boolean).join(';\n');
      const answered = await client.query(text);
      this.preparedWrites.held(client, preparing);
      client.release();
      for (const write of writes) write.written = true;
      const list = (Array.isArray(answered) ? answered : [answered]) as pg.QueryResult[];
      along.forEach((a, i) => (a.read.rows = list[list.length - 1 - along.length + i].rows));
      return value;
    } catch (error) {
      // Back in the pool only if it answers (and is out of any transaction), knowing which writes it has prepared.
      let healthy = await client.query('rollback').then(() => true, () => false);
      if (healthy && preparing.length) healthy = await this.preparedWrites.resync(client).then(() => true, () => false);
      client.release(!healthy);
      throw error;
    }
  }

  /** One append in its own statement and transaction. */
  private appendAlone(member: PendingAppend): Promise<AppendResult> {
    return whileGuardHeld(() => this.appendAloneOnce(member));
  }

  private async appendAloneOnce({ streamId, request }: PendingAppend): Promise<AppendResult> {
    let row: { last_revision: string; tx_id: string; last_position: string };
    try {
      const result = await this.pool.query(appendQuery(streamId, request.events, request.expectedRevision, this.versions, request.facts, request.guards));
      row = result.rows[0];
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'CR003') return this.refused({ streamId, request }, staleFacts(request));
      if (code !== 'CR001' && code !== '23505') throw error;
      return this.refused({ streamId, request }, this.translate(error, streamId, request.expectedRevision));
    }
    this.wakeReaders();
    return {
      nextExpectedRevision: Number(row.last_revision),
      position: { commit: BigInt(row.tx_id), prepare: BigInt(row.last_position) },
    };
  }

  /** An append refused on its revision or an event id: a retry of one that went through answers as that one did. */
  private async refused({ streamId, request }: Pick<PendingAppend, 'streamId' | 'request'>, error: unknown): Promise<AppendResult> {
    const retried = await this.earlierAppendOf(streamId, request.events);
    if (retried) return retried;
    throw error;
  }

  /** Wake-ups so far (appends here, NOTIFYs from other processes): see `readPage`. */
  private wakes = 0;

  private wake(): void {
    this.wakes++;
    this.appended.next();
  }

  private wakeReaders(): void {
    this.wake();
    this.notifyOtherProcesses();
  }

  /**
   * After a failed append: if every one of its event ids is already in this stream, it is a
   * retry of an append that went through, and it answers as that one did.
   */
  private async earlierAppendOf(streamId: string, events: NewEvent[]): Promise<AppendResult | null> {
    const { rows } = await this.pool.query<{ stream_id: string; revision: number; tx_text: string; position_text: string }>(
      `select stream_id, stream_revision::int as revision, tx_id::text as tx_text, position::text as position_text
         from events where event_id = any($1::uuid[]) order by stream_revision`,
      [events.map((e) => e.id)],
    );
    if (rows.length === 0) return null;
    if (rows.length !== events.length || rows.some((r) => r.stream_id !== streamId)) throw new DuplicateEventIdError(streamId);
    const last = rows[rows.length - 1];
    return { nextExpectedRevision: last.revision, position: { commit: BigInt(last.tx_text), prepare: BigInt(last.position_text) } };
  }

  // Both reads are named (prepared once per connection): nearly every request reads a stream
  // (a settings stream's fresh check, a record's), and planning the read cost more than running it.
  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>({
      name: 'es_read_stream',
      text: `select ${EVENT_COLUMNS} from events
              where stream_id = $1 and stream_revision >= $2
              order by stream_revision limit $3`,
      values: [streamId, options.fromRevision ?? 0, options.maxCount ?? null],
    });
    return rows.map((row) => toRecorded(row, this.versions));
  }

  async readLastEvent(streamId: string): Promise<RecordedEvent | null> {
    const { rows } = await this.pool.query<EventRow>({
      name: 'es_read_last_event',
      text: `select ${EVENT_COLUMNS} from events where stream_id = $1 order by stream_revision desc limit 1`,
      values: [streamId],
    });
    return rows.length ? toRecorded(rows[0], this.versions) : null;
  }

  /**
   * Every projection and saga of a process reads the same page right after an append:
   * a read asked while the same read is already running shares its answer (which is
   * complete for its moment, so nobody skips an event; the next read goes on from it).
   * Only a read begun since the last wake-up is shared: a reader woken by an append must
   * not get the answer of a read that began before that append committed, or it would wait
   * for the next wake-up (or its idle poll) to see it. A reader behind the newest reads
   * gets its events from the pages read lately (RecentPages), as a slice that may stop
   * short (`readOn`). Callers must not modify the events they get.
   */
  readPage(options: ReadAllOptions): Promise<LogPage> {
    const from = options.from ?? { commit: 0n, prepare: 0n };
    if (!readFilter(options.filter)) {
      const kept = this.recentPages.take(from, options.maxCount);
      if (kept) return Promise.resolve(kept);
    }
    return this.sharedRead(from, options, true);
  }

  /**
   * A page as long as one read gives it: never a slice of a kept page (callers may take a
   * short page for the end), and not kept (one-event probes would crowd out followers' pages).
   */
  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.sharedRead(options.from ?? { commit: 0n, prepare: 0n }, options, false)).events;
  }

  private sharedRead(from: Position, options: ReadAllOptions, keep: boolean): Promise<LogPage> {
    const filter = readFilter(options.filter);
    const wakes = this.wakes;
    const key = `${wakes}:${from.commit}:${from.prepare}:${options.maxCount}${filter ? `:${JSON.stringify([filter.tenantId, filter.types])}` : ''}`;
    let read = this.readsInFlight.get(key);
    if (!read) {
      read = this.queryPage(from, options.maxCount, filter).finally(() => this.readsInFlight.delete(key));
      if (keep && !filter) void read.then((page) => this.recentPages.keep(from, page), () => undefined);
      this.readsInFlight.set(key, read);
    }
    return read;
  }

  private readonly readsInFlight = new Map<string, Promise<LogPage>>();
  /** Followers behind the newest read take their pages from here (see RecentPages). */
  private readonly recentPages = new RecentPages(RECENT_PAGE_EVENTS);

  private async queryPage(from: Position, maxCount: number, filter: EventFilter | undefined): Promise<LogPage> {
    const { rows } = await this.pool.query<EventRow & { held: boolean; held_after: boolean }>(readPageQuery(from, maxCount, filter));
    // A held row is only there to say that events are held back: it is not handed out.
    return {
      events: rows.filter((r) => !r.held).map((row) => toRecorded(row, this.versions)),
      heldBack: rows.length > 0 && (rows[0].held || rows[0].held_after),
    };
  }

  async headPosition(): Promise<Position | null> {
    const { rows } = await this.pool.query<{ tx_text: string; position_text: string }>(
      `select tx_id::text as tx_text, position::text as position_text from events
        where tx_id < (select es_read_horizon(pg_current_snapshot(), '0', 0))
        order by tx_id desc, position desc limit 1`,
    );
    return rows.length ? { commit: BigInt(rows[0].tx_text), prepare: BigInt(rows[0].position_text) } : null;
  }

  /**
   * Every event committed before the call has a transaction id below the snapshot's xmax
   * then (it is past every ended transaction); once the log's own horizon (es_append_horizon,
   * which passes over transactions that hold no stream lock) reaches that xmax, no append
   * that could commit below them is still under way. Unlike pg_snapshot_xmin, a long
   * transaction elsewhere on the server that appends nothing does not hold it back.
   */
  async appendsSettled(timeoutMs: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ after: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as after');
    const deadline = Date.now() + timeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
      const settled = await this.pool.query<{ ok: boolean }>({
        name: 'es_appends_settled',
        text: 'select es_append_horizon(pg_current_snapshot()) >= $1::text::xid8 as ok',
        values: [rows[0].after],
      });
      if (settled.rows[0].ok) return true;
      if (Date.now() >= deadline) return false;
      await sleep(pause);
    }
  }

  subscribeToAll(options: { from?: Position | null; filter?: EventFilter } = {}): Observable<RecordedEvent> {
    return catchUpSubscription(this, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.appended.complete();
    await this.listener?.close();
  }

  private translate(error: unknown, streamId: string, expected: ExpectedRevision): unknown {
    const pgError = error as { code?: string; detail?: string; constraint?: string };
    if (pgError.code === 'CR001') {
      const actual = pgError.detail === 'no_stream' || !pgError.detail ? 'no_stream' : Number(pgError.detail);
      return new WrongExpectedRevisionError(streamId, expected, actual);
    }
    // Two appends racing for the same stream head or event id: the loser sees a unique violation.
    if (pgError.code === '23505') return new WrongExpectedRevisionError(streamId, expected, 'no_stream');
    return error;
  }

  /**
   * Wakes readers in other processes: one NOTIFY at a time, coalescing appends made
   * meanwhile, and none while no other process listens (each NOTIFY is a commit of its
   * own, about a fifth of the append rate in the single-process default).
   */
  private notifyOtherProcesses(): void {
    if (this.closed) return;
    if (this.notifyInFlight) {
      this.notifyPending = true;
      return;
    }
    this.notifyInFlight = true;
    this.sendNotifyIfListened()
      .catch((error) => this.logger?.warn({ err: error }, 'event store: notify failed'))
      .finally(() => {
        this.notifyInFlight = false;
        if (this.notifyPending) {
          this.notifyPending = false;
          this.notifyOtherProcesses();
        }
      });
  }

  private async sendNotifyIfListened(): Promise<void> {
    if (await this.presence.othersListen()) await this.pool.query(`select pg_notify('${CHANNEL}', '')`);
  }
}

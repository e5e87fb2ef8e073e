/**
 * The event log's own tables and functions. `tx_id` is the appending transaction's id;
 * readers take events in (tx_id, position) order, and only below a horizon that no
 * transaction still able to append lies under (`es_read_horizon`), so no later commit
 * can land behind a position already handed out.
 */
/**
 * A stream's newest revision (null: no stream), as SQL, `stream` an SQL expression: the last
 * entry of the log's (stream, revision) index. Appends read it after taking the stream's lock;
 * a read model query reads it in the same snapshot as the rows an append wrote inline.
 * (Streams once kept their head in a table of their own, `event_streams`, updated by every
 * append: reading it cost a page prune on most appends, since every update left a dead row.)
 */
export const streamHeadSql = (stream: string): string => `(select max(h.stream_revision) from events h where h.stream_id = ${stream})`;

export const EVENT_STORE_SCHEMA = `
-- Stream heads were kept here until streamHeadSql read them from the log's index.
drop table if exists event_streams;

create table if not exists events (
  position bigint generated always as identity,
  tx_id xid8 not null default pg_current_xact_id(),
  event_id uuid not null,
  stream_id text not null,
  stream_revision bigint not null,
  type text not null,
  data jsonb not null,
  metadata jsonb not null,
  created_at timestamptz not null,
  primary key (position),
  unique (event_id),
  unique (stream_id, stream_revision)
);

-- The version of the event's data shape (see src/events/versions.ts); events stored before
-- versions existed are version 1. An append hands it over in metadata's 'schemaVersion',
-- which the append functions move into this column. Checked first: ALTER TABLE would lock
-- the log against readers and appends even when the column is there.
do $do$ begin
  if not exists (select 1 from pg_attribute where attrelid = 'events'::regclass and attname = 'schema_version' and not attisdropped) then
    alter table events add column schema_version smallint not null default 1;
  end if;
end $do$;

create index if not exists events_global_order on events (tx_id, position);
-- A tenant's events in global order (the change feed reads them without scanning other tenants').
-- Built on the first start of a version that has it: appends wait while it is built.
create index if not exists events_tenant_order on events ((metadata->>'tenantId'), tx_id, position);

-- Appends a batch to one stream in one round trip. p_expected: -2 any, -1 no stream, n revision.
-- A retried append (same event ids) fails here on the revision or the event id; the
-- client then recognises it as a retry, which keeps that check off the hot path.
-- Projections applied inside the appends' transactions (see src/projections/inline.ts): an
-- append with p_inline takes this lock shared and answers with their names, which it reads
-- under that lock; a switch or a rebuild's swap changes them holding it exclusively.
create table if not exists es_inline_projections (
  name text primary key,
  switched_at timestamptz not null default now()
);

-- Facts a command decided on without reading them (a process's cached settings): a JSON
-- array of [stream, revision] pairs, revision -1 for "no stream". True when every stream
-- still stands there. An append given them writes only if they hold (see
-- src/commands/checked-facts.ts); a stream appended to concurrently counts as it was
-- committed when this runs, as if the command had read it then. A triple [stream, revision,
-- member] names a stream appended earlier in the same group: es_append_group_events checks it
-- against that member, and it is left out here.
-- PL/pgSQL, not SQL: a SQL function called from the append functions planned its query anew on
-- every call (PostgreSQL 17 keeps no plan of a SQL function between calls), which cost more than running it.
create or replace function es_unchanged(p_facts jsonb) returns boolean
language plpgsql stable as $fn$
begin
  return coalesce((select bool_and(coalesce(${streamHeadSql('f ->> 0')}, -1) = (f ->> 1)::bigint)
                     from jsonb_array_elements(coalesce(p_facts, '[]'::jsonb)) f
                    where f -> 2 is null), true);
end
$fn$;

-- Earlier signatures (before p_facts, before p_guards): left beside the new ones, a call would match several.
drop function if exists es_append_events(boolean, text, bigint, uuid[], text[], jsonb[], jsonb[], timestamptz[]);
drop function if exists es_append(text, bigint, uuid[], text[], jsonb[], jsonb[], timestamptz[]);
drop function if exists es_append_group_events(boolean, text[], bigint[], int[], uuid[], text[], jsonb, jsonb, timestamptz[]);
drop function if exists es_append_group(text[], bigint[], int[], uuid[], text[], jsonb, jsonb, timestamptz[]);
drop function if exists es_append_events(boolean, text, bigint, uuid[], text[], jsonb[], jsonb[], timestamptz[], jsonb);
drop function if exists es_append(text, bigint, uuid[], text[], jsonb[], jsonb[], timestamptz[], jsonb);
drop function if exists es_append_group_events(boolean, text[], bigint[], int[], uuid[], text[], jsonb, jsonb, timestamptz[], jsonb);
drop function if exists es_append_group(text[], bigint[], int[], uuid[], text[], jsonb, jsonb, timestamptz[], jsonb);

-- es_append with every event's position (revision order), and with p_inline the names of
-- the inline projections the caller applies in the same transaction. p_facts: see
-- es_unchanged; when they no longer hold, nothing is written (error CR003). p_guards: keys
-- of usage guards (src/infra/serial-lock.ts) held shared until the transaction ends, as
-- alongside() holds them. Only tried, before anything else: while an exclusive holder has
-- one, nothing is written (error CR004) and the store tries again later, holding no
-- connection meanwhile (waiting appends could otherwise take every connection the holder
-- needs for its own append).
create or replace function es_append_events(
  p_inline boolean, p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[],
  p_metadata jsonb[], p_created_at timestamptz[], p_facts jsonb default null, p_guards text[] default null
) returns table (revision bigint, tx_id text, event_position bigint, inline_projections text[])
language plpgsql as $fn$
#variable_conflict use_column
declare
  v_count int := cardinality(p_ids);
  v_current bigint;
  v_ok boolean;
  v_last bigint;
  v_inline text[];
begin
  -- Serialise appends to this stream before this transaction gets its id: then within a
  -- stream, transaction-id order (the global order) is revision order. Locking the
  -- stream row alone would not do: a transaction can get its id, lose the race for the
  -- row, and commit the later revision under the smaller id. (Two-key advisory locks
  -- are a keyspace of their own, apart from the runners' one-key locks.)
  -- The stream lock also tells readers that this transaction writes events (see
  -- es_read_horizon), which holds only if it was taken before the transaction got its
  -- id: an append after other writes of the same transaction is refused.
  if pg_current_xact_id_if_assigned() is not null then
    if not exists (select 1 from pg_locks l
                    where l.locktype = 'advisory' and l.pid = pg_backend_pid() and l.classid = 1129467213
                      and l.objsubid = 2 and l.database = (select d.oid from pg_database d where d.datname = current_database())) then
      raise exception 'es_append_events must come before every other write of its transaction'
        using errcode = 'CR002';
    end if;
  end if;
  if not coalesce((select bool_and(pg_try_advisory_xact_lock_shared(hashtextextended(k, 0))) from unnest(p_guards) k), true) then
    raise exception 'a usage guard is held' using errcode = 'CR004';
  end if;
  if p_inline then
    perform pg_advisory_xact_lock_shared(hashtextextended('crm:inline-projections', 0));
    select coalesce(array_agg(i.name order by i.name), '{}') into v_inline from es_inline_projections i;
  end if;
  perform pg_advisory_xact_lock(1129467213, hashtext(p_stream));
  if p_facts is not null and not es_unchanged(p_facts) then
    raise exception 'facts changed' using errcode = 'CR003';
  end if;
  -- A statement of its own, after the lock: its snapshot sees every append that held it before.
  v_current := ${streamHeadSql('p_stream')};
  v_ok := case p_expected when -2 then true when -1 then v_current is null else v_current is not distinct from p_expected end;
  if not v_ok then
    raise exception 'wrong expected revision'
      using errcode = 'CR001', detail = coalesce(v_current::text, 'no_stream');
  end if;
  v_last := coalesce(v_current, -1) + v_count;

  return query
    with inserted as (
      insert into events (event_id, stream_id, stream_revision, type, data, metadata, created_at, schema_version)
      select i.id, p_stream, v_last - v_count + i.n, i.type, i.data, i.metadata - 'schemaVersion', i.created_at,
             coalesce((i.metadata->>'schemaVersion')::smallint, 1)
        from unnest(p_ids, p_types, p_data, p_metadata, p_created_at)
             with ordinality as i(id, type, data, metadata, created_at, n)
      order by i.n
      returning events.stream_revision as rev, events.tx_id::text as txt, events.position as pos
    )
    select w.rev, w.txt, w.pos, v_inline from inserted w order by w.rev;
end
$fn$;

-- No longer called by the store (its statement calls es_append_events itself: a SQL function
-- is planned on every call); kept for processes of an earlier version during a rolling upgrade.
create or replace function es_append(
  p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[],
  p_metadata jsonb[], p_created_at timestamptz[], p_facts jsonb default null, p_guards text[] default null
) returns table (last_revision bigint, tx_id text, last_position bigint)
language sql as $fn$
  select e.revision, e.tx_id, e.event_position
    from es_append_events(false, p_stream, p_expected, p_ids, p_types, p_data, p_metadata, p_created_at, p_facts, p_guards) e
   order by e.revision desc limit 1
$fn$;

-- Group commit: appends to distinct streams (member i: p_streams[i], p_expected[i] as in
-- es_append, and the next p_counts[i] events of the flat event arrays; data and metadata
-- as one JSON array each, cheaper to pass than arrays of JSON texts) written by one
-- transaction, the store's own, in autocommit. Each member is checked alone and answered
-- alone, in member order: 'ok' (revision: its last one), 'wrong_revision' (revision: the
-- stream's, null for no stream; nothing of it written), 'stale' (its facts, p_facts[i - 1]
-- as in es_unchanged, no longer hold; nothing of it written) or 'busy' (another transaction
-- holds its stream lock; nothing written: the store appends it alone). A group never
-- waits for a lock, so it can never deadlock with a transaction appending to several
-- streams. Any error of the statement (a duplicate event id) undoes the whole group; the
-- store then appends each member alone, which gives each its own answer.
-- Per-member work goes through arrays indexed by member and event, so that a group costs
-- in proportion to its size (a join of events to members would grow with the product).
-- es_append_group with each member's event positions (a JSON array, revision order) and,
-- with p_inline, the inline projections' names (as in es_append_events).
create or replace function es_append_group_events(
  p_inline boolean, p_streams text[], p_expected bigint[], p_counts int[], p_ids uuid[], p_types text[], p_data jsonb,
  p_metadata jsonb, p_created_at timestamptz[], p_facts jsonb default null, p_guards jsonb default null
) returns table (member int, status text, revision bigint, tx_id text, positions text, inline_projections text[])
language plpgsql
-- Planned once per connection: left to choose, PostgreSQL may plan its statements anew on
-- every call (a group's custom plan is estimated close to the generic one), which costs
-- more than running them. So the plans must not depend on table sizes (see below).
set plan_cache_mode = force_generic_plan
as $fn$
#variable_conflict use_column
declare
  v_locked boolean[];
  v_fresh boolean[] := '{}';
  v_current bigint[];
  v_ok boolean[] := '{}';
  v_last bigint[] := '{}';
  v_member int[] := '{}';  -- per event: its member
  v_rev bigint[] := '{}';  -- per event: its revision
  v_from int[] := '{}';    -- per member: where its events start in v_positions
  v_positions bigint[];    -- the written events' positions, in event order
  v_written int := 0;
  v_event int := 0;
  v_base bigint;
  v_inline text[];
begin
  -- Every stream lock before the first write, as in es_append (the read horizon relies on it).
  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'es_append_group_events must have a transaction of its own' using errcode = 'CR002';
  end if;
  if p_inline then
    perform pg_advisory_xact_lock_shared(hashtextextended('crm:inline-projections', 0));
    select coalesce(array_agg(i.name order by i.name), '{}') into v_inline from es_inline_projections i;
  end if;
  select array_agg(pg_try_advisory_xact_lock(1129467213, hashtext(u.s)) order by u.i) into v_locked
    from unnest(p_streams) with ordinality as u(s, i);
  -- Member i's guard keys (p_guards[i - 1], as in es_append_events) are only tried: a member
  -- whose guard is held exclusively is 'busy' and goes alone, where it waits for it.
  if p_guards is not null then
    for i in 1 .. cardinality(p_streams) loop
      v_locked[i] := v_locked[i] and coalesce((select bool_and(pg_try_advisory_xact_lock_shared(hashtextextended(k, 0)))
                                                  from jsonb_array_elements_text(p_guards -> (i - 1)) k), true);
    end loop;
  end if;
  -- A statement of its own, so that its snapshot sees every append that held these locks
  -- before. A subquery per stream, not a join: a join planned while the table was small
  -- would scan it all for as long as the connection lives.
  select array_agg(${streamHeadSql('u.s')} order by u.i) into v_current
    from unnest(p_streams) with ordinality as u(s, i);

  for i in 1 .. cardinality(p_streams) loop
    -- Member i's facts (see es_unchanged) are p_facts[i - 1]; checked only for a member it could write.
    v_fresh[i] := not v_locked[i] or p_facts is null or es_unchanged(p_facts -> (i - 1));
    -- A fact on an earlier member of this group (its number third, see groupQuery) holds when
    -- that member is written here and ends at that revision: both go in, or this one does not.
    if v_fresh[i] and p_facts is not null and jsonb_path_exists(p_facts -> (i - 1), '$[*][2]') then
      v_fresh[i] := (select bool_and(coalesce(v_ok[(f ->> 2)::int], false) and v_last[(f ->> 2)::int] = (f ->> 1)::bigint)
                       from jsonb_array_elements(p_facts -> (i - 1)) f
                      where f -> 2 is not null);
    end if;
    v_ok[i] := v_locked[i] and v_fresh[i] and case p_expected[i] when -2 then true when -1 then v_current[i] is null else v_current[i] = p_expected[i] end;
    v_base := coalesce(v_current[i], -1);
    v_last[i] := case when v_ok[i] then v_base + p_counts[i] else v_current[i] end;
    v_from[i] := v_written + 1;
    if v_ok[i] then
      v_written := v_written + p_counts[i];
    end if;
    for j in 1 .. p_counts[i] loop
      v_event := v_event + 1;
      v_member[v_event] := i;
      v_rev[v_event] := v_base + j;
    end loop;
  end loop;

  with inserted as (
    insert into events (event_id, stream_id, stream_revision, type, data, metadata, created_at, schema_version)
    select e.id, p_streams[v_member[e.n]], v_rev[e.n], e.type, p_data -> (e.n::int - 1),
           (p_metadata -> (e.n::int - 1)) - 'schemaVersion', e.created_at,
           coalesce((p_metadata -> (e.n::int - 1) ->> 'schemaVersion')::smallint, 1)
      from unnest(p_ids, p_types, p_created_at) with ordinality as e(id, type, created_at, n)
     where v_ok[v_member[e.n]]
     order by e.n
    returning events.position
  )
  -- Positions are drawn as the rows go in, in event order.
  select array_agg(w.position order by w.position) into v_positions from inserted w;

  return query
    select g.i,
           case when not v_locked[g.i] then 'busy' when not v_fresh[g.i] then 'stale' when v_ok[g.i] then 'ok' else 'wrong_revision' end,
           v_last[g.i],
           case when v_ok[g.i] then pg_current_xact_id()::text end,
           case when v_ok[g.i] then array_to_json(v_positions[v_from[g.i]:v_from[g.i] + p_counts[g.i] - 1])::text end,
           v_inline
      from generate_subscripts(p_streams, 1) as g(i)
     order by g.i;
end
$fn$;

-- Likewise no longer called by the store (it calls es_append_group_events), kept for the same reason.
create or replace function es_append_group(
  p_streams text[], p_expected bigint[], p_counts int[], p_ids uuid[], p_types text[], p_data jsonb,
  p_metadata jsonb, p_created_at timestamptz[], p_facts jsonb default null, p_guards jsonb default null
) returns table (member int, status text, revision bigint, tx_id text, last_position text)
language sql as $fn$
  select g.member, g.status, g.revision, g.tx_id, (g.positions::jsonb ->> -1)
    from es_append_group_events(false, p_streams, p_expected, p_counts, p_ids, p_types, p_data, p_metadata, p_created_at, p_facts, p_guards) g
   order by g.member
$fn$;

-- The transaction id below which the log is final for a read whose snapshot is p_snapshot
-- (pass the reading statement's own pg_current_snapshot()). Readers hand out events with
-- tx_id below it, so no event may ever commit below it after they were read.
--
-- pg_snapshot_xmin would do, but it is the oldest transaction of the whole server: any
-- long write transaction (a migration, a rebuild page, another database) would hold
-- every reader back. Only transactions that append events matter, and those are known:
-- es_append takes a stream lock (advisory, key 1129467213) before the transaction has an
-- id, and a transaction-level lock stays held until after the transaction has left the
-- proc array (PostgreSQL removes it there before releasing its locks).
--
-- So the horizon is the oldest transaction running in p_snapshot (its xip list) except
-- those "cleared": seen in one look at the lock table (t1) holding their own id's lock
-- and no stream lock of this database, and still running afterwards (t2, pg_xact_status).
-- Why a cleared transaction X never appends: X had its id when p_snapshot was taken, so
-- before t1; were X a writer, it would have taken a stream lock before that id and would
-- hold it until after it has recorded its end and left the proc array, so after t2; the
-- look at t1 would have shown that lock. Every other transaction id is either finished in
-- p_snapshot (its events already visible to this read, or never to anyone), or at or
-- above the horizon (uncleared, or at or above the snapshot's xmax; later transactions
-- get later ids). So no event can commit below the horizon after this read.
-- The look must come before the "still running" check, hence two statements; a lock
-- table row and its holder's other rows are one consistent picture (one pg_locks call).
-- Any such misreading (a transaction ending meanwhile, an unknown status) leaves the
-- transaction uncleared: it can only hold readers back, never let one skip.
--
-- es_append_horizon computes that horizon. Reading pg_locks scans the lock manager (about
-- 0.1-0.3 ms), so es_read_horizon only asks it when some event past the reader's position
-- (p_after_*) is at or above xmin: otherwise xmin gives the same page. (That probe runs in a
-- later snapshot than p_snapshot; finding nothing there means nothing in p_snapshot either.)
create or replace function es_append_horizon(p_snapshot pg_snapshot)
returns xid8
language plpgsql volatile as $fn$
declare
  v_idle xid8[];
begin
  -- t1: running transactions of the snapshot that hold no stream lock (pg_locks read once).
  with locks as materialized (
    select l.locktype, l.virtualtransaction, l.transactionid, l.database, l.classid, l.objsubid, l.mode, l.granted
      from pg_locks l where l.locktype in ('transactionid', 'advisory')
  )
  select array_agg(x) into v_idle
    from pg_snapshot_xip(p_snapshot) x
    join locks own on own.locktype = 'transactionid' and own.transactionid = x::xid
                  and own.mode = 'ExclusiveLock' and own.granted
   where not exists (select 1 from locks w
                      where w.locktype = 'advisory' and w.virtualtransaction = own.virtualtransaction
                        and w.classid = 1129467213 and w.objsubid = 2
                        and w.database = (select d.oid from pg_database d where d.datname = current_database()));

  -- t2: of those, only the ones still running are cleared (unknown status: not cleared).
  return coalesce(
    (select min(x) from pg_snapshot_xip(p_snapshot) x
      where not coalesce(x = any(v_idle) and pg_xact_status(x) = 'in progress', false)),
    pg_snapshot_xmax(p_snapshot));
end
$fn$;

create or replace function es_read_horizon(p_snapshot pg_snapshot, p_after_tx xid8, p_after_pos bigint)
returns xid8
language plpgsql volatile as $fn$
declare
  v_xmin xid8 := pg_snapshot_xmin(p_snapshot);
begin
  -- (Ordered, so that it is an index probe, not a table scan; EXISTS would drop the ORDER
  -- BY.) It starts at the later of the reader's position and xmin, given as one row bound:
  -- btree does not merge a row bound with a bound on tx_id alone, and would walk every
  -- event from a reader far behind up to xmin.
  perform from events e
    where (e.tx_id, e.position) > (greatest(p_after_tx, v_xmin), case when v_xmin > p_after_tx then -1 else p_after_pos end)
      and e.tx_id >= v_xmin
    order by e.tx_id, e.position limit 1;
  if not found then
    return v_xmin;
  end if;
  return es_append_horizon(p_snapshot);
end
$fn$;
`;

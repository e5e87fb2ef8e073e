/**
 * The event log's own tables. `tx_id` is the appending transaction's id: readers only
 * take events whose transaction is older than every transaction still running
 * (`pg_snapshot_xmin`), in (tx_id, position) order, so no later commit can land
 * behind a position already handed out.
 */
export const EVENT_STORE_SCHEMA = `
create table if not exists event_streams (
  stream_id text primary key,
  revision bigint not null
);

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

create index if not exists events_global_order on events (tx_id, position);

-- Appends a batch to one stream in one round trip. p_expected: -2 any, -1 no stream, n revision.
-- A retried append (same event ids) fails here on the revision or the event id; the
-- client then recognises it as a retry, which keeps that check off the hot path.
create or replace function es_append(
  p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[],
  p_metadata jsonb[], p_created_at timestamptz[]
) returns table (last_revision bigint, tx_id text, last_position bigint)
language plpgsql as $fn$
#variable_conflict use_column
declare
  v_count int := cardinality(p_ids);
  v_last bigint;
begin
  -- Serialise appends to this stream before this transaction gets its id: then within a
  -- stream, transaction-id order (the global order) is revision order. Locking the
  -- stream row alone would not do: a transaction can get its id, lose the race for the
  -- row, and commit the later revision under the smaller id. (Two-key advisory locks
  -- are a keyspace of their own, apart from the runners' one-key locks.)
  perform pg_advisory_xact_lock(1129467213, hashtext(p_stream));
  if p_expected = -2 then
    insert into event_streams as s (stream_id, revision) values (p_stream, v_count - 1)
      on conflict (stream_id) do update set revision = s.revision + v_count
      returning s.revision into v_last;
  elsif p_expected = -1 then
    insert into event_streams (stream_id, revision) values (p_stream, v_count - 1)
      on conflict (stream_id) do nothing
      returning revision into v_last;
  else
    update event_streams s set revision = s.revision + v_count
      where s.stream_id = p_stream and s.revision = p_expected
      returning s.revision into v_last;
  end if;

  if v_last is null then
    select s.revision into v_last from event_streams s where s.stream_id = p_stream;
    raise exception 'wrong expected revision'
      using errcode = 'CR001', detail = coalesce(v_last::text, 'no_stream');
  end if;

  return query
    with inserted as (
      insert into events (event_id, stream_id, stream_revision, type, data, metadata, created_at)
      select i.id, p_stream, v_last - v_count + i.n, i.type, i.data, i.metadata, i.created_at
        from unnest(p_ids, p_types, p_data, p_metadata, p_created_at)
             with ordinality as i(id, type, data, metadata, created_at, n)
      order by i.n
      returning events.stream_revision as rev, events.tx_id::text as txt, events.position as pos
    )
    select w.rev, w.txt, w.pos from inserted w order by w.rev desc limit 1;
end
$fn$;
`;

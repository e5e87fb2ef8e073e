import pg from 'pg';
import { runWritersAfterWarmUp, type WriterRun } from '../writers.js';

/** About the size of a small event's data: the reference is the commit, not the payload. */
const PAYLOAD = JSON.stringify({ name: 'Contact 123456', email: 'contact123456@example.com', status: 'new', score: 42 });

/**
 * The reference for event appends: autocommit one-row inserts on dedicated connections,
 * so each is one round trip and one WAL flush, with nothing of the event store around it.
 */
export async function measureRawCommits(url: string, options: { writers: number; seconds: number }): Promise<WriterRun> {
  const clients = Array.from({ length: options.writers }, () => {
    const client = new pg.Client({ connectionString: url });
    // A connection cut by cleanup (Ctrl-C drops the database) must fail its query, not the process.
    client.on('error', () => undefined);
    return client;
  });
  try {
    await Promise.all(clients.map((c) => c.connect()));
    await clients[0].query(`create table bench_raw (
      id bigint generated always as identity primary key,
      writer int not null,
      payload text not null,
      created_at timestamptz not null default now()
    )`);
    return await runWritersAfterWarmUp(options, async (writer) => {
      await clients[writer].query('insert into bench_raw (writer, payload) values ($1, $2)', [writer, PAYLOAD]);
    });
  } finally {
    await Promise.allSettled(clients.map((c) => c.end()));
  }
}

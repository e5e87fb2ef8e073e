import pg from 'pg';

/** About the size of a small event's data: the reference is the commit, not the payload. */
const PAYLOAD = JSON.stringify({ name: 'Contact 123456', email: 'contact123456@example.com', status: 'new', score: 42 });

/** The statement of a raw commit (statement statistics leave it out of the appends'). */
export const RAW_TABLE = 'bench_raw';

export interface RawCommits {
  /** One autocommit one-row insert on the writer's own connection. */
  commit(writer: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The reference for event appends: autocommit one-row inserts on dedicated connections,
 * so each is one round trip and one WAL flush, with nothing of the event store around it.
 */
export async function openRawCommits(url: string, writers: number): Promise<RawCommits> {
  const clients = Array.from({ length: writers }, () => {
    const client = new pg.Client({ connectionString: url });
    // A connection cut by cleanup (Ctrl-C drops the database) must fail its query, not the process.
    client.on('error', () => undefined);
    return client;
  });
  const close = async () => {
    await Promise.allSettled(clients.map((c) => c.end()));
  };
  try {
    await Promise.all(clients.map((c) => c.connect()));
    await clients[0].query(`create table ${RAW_TABLE} (
      id bigint generated always as identity primary key,
      writer int not null,
      payload text not null,
      created_at timestamptz not null default now()
    )`);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    commit: async (writer) => {
      await clients[writer].query(`insert into ${RAW_TABLE} (writer, payload) values ($1, $2)`, [writer, PAYLOAD]);
    },
    close,
  };
}

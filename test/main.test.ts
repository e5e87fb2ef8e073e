import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { freshDatabaseUrl } from './support/database.js';

/** Runs `src/main.ts` as a real process, as `npm start` would (through tsx instead of the build). */
function startProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    child.stdout.on('data', () => {
      const line = output.split('\n').find((l) => l.includes('service listening'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    exited.then(() => reject(new Error(`exited early:\n${output}`)));
  });
  return { child, exited, listening, output: () => output };
}

describe('the service process', () => {
  it('starts, serves /health, and exits 0 on SIGTERM after shutting down in order', async () => {
    const proc = startProcess({ DATABASE_URL: await freshDatabaseUrl() });
    try {
      const port = await proc.listening;
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).to.equal(200);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).to.equal(0);
      expect(proc.output()).to.contain('"msg":"stopped"');
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('exits 1 with a clear message on bad configuration', async () => {
    const proc = startProcess({ PORT: 'not-a-port', ROLE: 'sometimes' });
    proc.listening.catch(() => undefined);
    expect(await proc.exited).to.equal(1);
    expect(proc.output()).to.contain('invalid configuration');
    expect(proc.output()).to.contain('PORT');
    expect(proc.output()).to.contain('ROLE');
  });
});

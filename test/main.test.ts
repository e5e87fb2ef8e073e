import { expect } from 'chai';
import { freshDatabaseUrl } from './support/database.js';
import { startProcess } from './support/process.js';

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

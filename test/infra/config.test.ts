import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/infra/config.js';

describe('configuration from the environment', () => {
  it('falls back to the documented defaults', () => {
    const config = loadConfig({});
    expect(config).to.include({
      PORT: 3000,
      API_BASE_PATH: '/api',
      ROLE: 'all',
      LOG_LEVEL: 'info',
      EMBEDDED_PG_DIR: './data/postgres',
      BODY_LIMIT: '1mb',
      HTTP_REQUEST_TIMEOUT_MS: 30000,
      HTTP_HEADERS_TIMEOUT_MS: 15000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5000,
    });
    expect(config.DATABASE_URL).to.equal(undefined);
    expect(config.EVENTSTORE_URL).to.equal(undefined);
  });

  it('shares the reactive side in 8 saga shards by default, and refuses a worker timeout shorter than three heartbeats', () => {
    expect(loadConfig({})).to.include({ SAGA_SHARDS: 8, WORKER_HEARTBEAT_MS: 1000, WORKER_TIMEOUT_MS: 10000 });
    expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '1000', WORKER_TIMEOUT_MS: '2999' })).to.throw(ConfigError, /WORKER_TIMEOUT_MS/);
    expect(() => loadConfig({ SAGA_SHARDS: '0' })).to.throw(ConfigError, /SAGA_SHARDS/);
    expect(loadConfig({ SAGA_SHARDS: '1' }).SAGA_SHARDS).to.equal(1);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', EVENTSTORE_URL: '  ' }).DATABASE_URL).to.equal(undefined);
  });

  it('refuses bad values, naming every offending variable', () => {
    const attempt = () => loadConfig({ PORT: 'eighty', ROLE: 'boss', DATABASE_URL: 'mysql://x/y', EVENTSTORE_URL: 'http://x' });
    expect(attempt).to.throw(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      for (const name of ['PORT', 'ROLE', 'DATABASE_URL', 'EVENTSTORE_URL']) expect(message).to.contain(name);
    }
  });

  it('accepts an EventStoreDB connection string and a custom base path', () => {
    const config = loadConfig({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false', API_BASE_PATH: '/v1' });
    expect(config.EVENTSTORE_URL).to.equal('esdb://localhost:2113?tls=false');
    expect(config.API_BASE_PATH).to.equal('/v1');
  });

  it('keeps the HTTP timeouts in order: keep-alive < headers <= request', () => {
    const config = loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '500', HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' });
    expect(config).to.include({ HTTP_REQUEST_TIMEOUT_MS: 500, HTTP_HEADERS_TIMEOUT_MS: 400, HTTP_KEEP_ALIVE_TIMEOUT_MS: 300 });
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '10000' })).to.throw(ConfigError, /HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '15000' })).to.throw(ConfigError, /HTTP_KEEP_ALIVE_TIMEOUT_MS: must be less than HTTP_HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).to.throw(ConfigError, /HTTP_REQUEST_TIMEOUT_MS/);
  });
});

describe('CORS_ORIGINS', () => {
  it('is empty by default (same-origin only) and reads a comma-separated list of exact origins', () => {
    expect(loadConfig({}).CORS_ORIGINS).to.deep.equal([]);
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ,' }).CORS_ORIGINS).to.deep.equal([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it('refuses what a browser never sends as an Origin: a path, a trailing slash, another scheme, a bare host', () => {
    for (const bad of ['https://app.example.com/', 'https://app.example.com/app', 'ftp://example.com', 'app.example.com', 'https://*.example.com', 'HTTPS://APP.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).to.throw(ConfigError, /CORS_ORIGINS/);
    }
  });
});

describe('SECRETS_ENCRYPTION_KEY', () => {
  it('is unset by default (secrets stored as given) and reads the previous keys as a comma-separated list', () => {
    expect(loadConfig({}).SECRETS_ENCRYPTION_KEY).to.equal(undefined);
    expect(loadConfig({}).SECRETS_ENCRYPTION_KEY_PREVIOUS).to.deep.equal([]);
    const config = loadConfig({ SECRETS_ENCRYPTION_KEY: 'n'.repeat(32), SECRETS_ENCRYPTION_KEY_PREVIOUS: ` ${'a'.repeat(32)}, ${'b'.repeat(40)} ,` });
    expect(config.SECRETS_ENCRYPTION_KEY_PREVIOUS).to.deep.equal(['a'.repeat(32), 'b'.repeat(40)]);
  });

  it('refuses keys shorter than 32 characters, current or previous', () => {
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEY: 'short' })).to.throw(ConfigError, /SECRETS_ENCRYPTION_KEY: must be at least 32/);
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEY_PREVIOUS: `${'a'.repeat(32)},short` })).to.throw(ConfigError, /SECRETS_ENCRYPTION_KEY_PREVIOUS/);
  });
});

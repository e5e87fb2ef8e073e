import { expect } from 'chai';
import { DomainError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/infra/clock.js';
import { connectDatabase, type Database } from '../../src/infra/database.js';
import { RateLimiter } from '../../src/infra/rate-limit.js';
import { allMigrations } from '../../src/modules.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';
import { freshDatabaseUrl } from '../support/database.js';

describe('rate limiter', () => {
  let db: Database;
  let clock: ManualClock;
  let limiter: RateLimiter;
  const hits = async (key: string) => Number((await db.knex('rate_limit_hits').where({ key }).sum('hits as n').first())?.n ?? 0);
  const outcome = (promise: Promise<void>) => promise.then(() => 'ok', (error) => (error instanceof DomainError ? error.kind : String(error)));

  before(async () => {
    db = connectDatabase(await freshDatabaseUrl(), 12);
    await migrateToLatest(db.knex, allMigrations());
    clock = new ManualClock('2026-03-02T10:00:30.000Z');
    limiter = new RateLimiter(db.knex, clock);
  });
  after(async () => db.close());

  it('counts 20 concurrent hits on one key exactly and refuses those over the limit, with Retry-After to the window end', async () => {
    const rule = { key: 'probe:ip:1', limit: 12, windowSeconds: 60 };
    const results = await Promise.all(Array.from({ length: 20 }, () => limiter.hit([rule]).then(() => 'ok', (error: DomainError) => error)));
    expect(results.filter((r) => r === 'ok')).to.have.length(12);
    const refused = results.filter((r): r is DomainError => r !== 'ok');
    expect(refused).to.have.length(8);
    for (const error of refused) expect(error).to.include({ kind: 'rate_limited' }).and.to.have.deep.property('details', { retryAfterSeconds: 30 });
    expect(await hits('probe:ip:1')).to.equal(20);
  });

  it('counts every rule of a hit, each in its own window; one over its limit refuses the hit', async () => {
    const address = { key: 'probe:ip:2', limit: 100, windowSeconds: 60 };
    const account = { key: 'probe:account:2', limit: 2, windowSeconds: 3600 };
    expect(await outcome(limiter.hit([address, account]))).to.equal('ok');
    expect(await outcome(limiter.hit([account, address]))).to.equal('ok');
    expect(await outcome(limiter.hit([address, account]))).to.equal('rate_limited');
    expect([await hits('probe:ip:2'), await hits('probe:account:2')]).to.deep.equal([3, 3]);
    // The next minute is a new window for the address, not for the account.
    clock.advance(60_000);
    expect(await outcome(limiter.hit([address]))).to.equal('ok');
    expect(await outcome(limiter.hit([account]))).to.equal('rate_limited');
    expect(await db.knex('rate_limit_hits').where({ key: 'probe:ip:2' }).orderBy('window_start').pluck('hits')).to.deep.equal([3, 1]);
  });

  it('counts one counter named twice in one hit once, by its strictest rule', async () => {
    const loose = { key: 'probe:ip:3', limit: 10, windowSeconds: 60 };
    const strict = { ...loose, limit: 1 };
    expect(await outcome(limiter.hit([loose, strict]))).to.equal('ok');
    expect(await outcome(limiter.hit([loose, strict]))).to.equal('rate_limited');
    expect(await hits('probe:ip:3')).to.equal(2);
    expect(await outcome(limiter.hit([]))).to.equal('ok');
  });

  it('a hit with a read: the read\'s rows with their types, the hit counted whatever it finds, and refused over the limit', async () => {
    const rule = { key: 'probe:ip:5', limit: 2, windowSeconds: 60 };
    const read = 'select $3::text as name, $4::timestamptz as at, $5::jsonb as doc where $3::text <> \'\'';
    const values = (name: string) => [name, new Date('2026-03-02T10:00:00Z'), { a: [1, null] }];
    const rows = await limiter.hitWithRead<{ name: string; at: Date; doc: unknown }>([rule], read, values('found'));
    expect(rows).to.deep.equal([{ name: 'found', at: new Date('2026-03-02T10:00:00Z'), doc: { a: [1, null] } }]);
    // Nothing found: no row, and the hit counts all the same.
    expect(await limiter.hitWithRead([rule], read, values(''))).to.deep.equal([]);
    expect(await hits('probe:ip:5')).to.equal(2);
    const refused = await limiter.hitWithRead([rule], read, values('found')).then(() => 'ok', (error: DomainError) => error);
    expect(refused).to.include({ kind: 'rate_limited' }).and.to.have.deep.property('details', { retryAfterSeconds: 30 });
    expect(await hits('probe:ip:5')).to.equal(3);
  });

  it('forgives a hit counted at a given time', async () => {
    const rule = { key: 'probe:ip:4', limit: 1, windowSeconds: 60 };
    const at = clock.now();
    await limiter.hit([rule], at);
    await limiter.forgive([rule], at);
    expect(await outcome(limiter.hit([rule], at))).to.equal('ok');
    expect(await hits('probe:ip:4')).to.equal(1);
  });
});

import { SingleBar, Presets } from 'cli-progress';
import { allProjections } from '../modules.js';
import { rebuildLockKey } from '../projections/online-rebuild.js';
import { takeOverForRebuild } from '../projections/inline.js';
import { rebuildProjection } from '../projections/rebuild.js';
import { runOperatorCommand, withOperatorContext } from './operator-context.js';

/**
 * `npm run projections:rebuild [name ...]`: replays the whole log into a fresh copy of
 * the named projections (all when none is named) and swaps each in when it is complete.
 * Online: the workers keep running it meanwhile and hand it over only for the final
 * catch-up and the swap (online-rebuild.ts). With the embedded database the service holds
 * the data folder, so this runs only while the service is stopped.
 */
async function main(): Promise<number> {
  const projections = allProjections();
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !projections.some((p) => p.name === n));
  if (unknown.length) {
    process.stderr.write(`unknown projection(s): ${unknown.join(', ')}\nknown: ${projections.map((p) => p.name).join(', ')}\n`);
    return 2;
  }
  const chosen = names.length ? projections.filter((p) => names.includes(p.name)) : projections;
  return withOperatorContext(async ({ db, store, locks, logger, config }) => {
    const retry = { attempts: config.PROJECTION_RETRY_ATTEMPTS, initialBackoffMs: config.PROJECTION_RETRY_BACKOFF_MS };
    for (const projection of chosen) {
      const key = rebuildLockKey(projection.name);
      if (!(await locks.tryAcquire(key, () => undefined))) {
        process.stderr.write(`projection ${projection.name} is being rebuilt by another process already\n`);
        return 1;
      }
      const head = await store.headPosition();
      const bar = new SingleBar(
        { format: `${projection.name.padEnd(24)} [{bar}] {percentage}% | {events} events | {rate} ev/s`, hideCursor: true },
        Presets.shades_classic,
      );
      const started = performance.now();
      bar.start(head ? Number(head.prepare) : 1, 0, { events: 0, rate: 0 });
      const result = await rebuildProjection({ store, knex: db.knex, logger, retry }, projection, {
        takeOver: takeOverForRebuild({ store, knex: db.knex, pool: db.pool, locks, logger }, projection.name),
        onProgress: (events, position) =>
          bar.update(Number(position.prepare), { events, rate: Math.round(events / ((performance.now() - started) / 1000)) }),
      });
      bar.update(head ? Number(head.prepare) : 1, { events: result.events, rate: Math.round(result.eventsPerSecond) });
      bar.stop();
      const parked = await db.knex('parked_events').where({ kind: 'projection', name: projection.name }).count({ n: '*' });
      const note = Number(parked[0].n) ? ` (${parked[0].n} parked: npm run projections:parked)` : '';
      process.stdout.write(
        `${projection.name}: ${result.events} events in ${result.seconds.toFixed(2)} s = ${Math.round(result.eventsPerSecond)} events/s${note}\n`,
      );
      await locks.release(key);
    }
    return 0;
  });
}

runOperatorCommand(main);

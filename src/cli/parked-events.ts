import { systemClock } from '../infra/clock.js';
import { Mailer } from '../infra/mailer.js';
import { SecretBox } from '../infra/secret-box.js';
import { TextMessenger } from '../infra/text-messages.js';
import { listBlockedStreams, listParked } from '../events/subscriptions/parked-events.js';
import { allProjections, allSagas } from '../modules.js';
import { runOperatorCommand, withOperatorContext } from './operator-context.js';
import { describeParked, replayParked, skipParked, type ReplayOutcome } from './replay-parked.js';

const USAGE = `usage: npm run projections:parked                 list parked events and the streams they block
       npm run projections:parked -- replay ID...   apply the named parked events again (and the events held behind them)
       npm run projections:parked -- replay --all   apply every parked event again
       npm run projections:parked -- skip ID...     discard the named parked events for good; the events held behind them are applied
`;

const describeOutcome = (o: ReplayOutcome) =>
  o.replayed ? `${o.id}\treplayed\n` : 'skipped' in o ? `${o.id}\tskipped\n` : `${o.id}\tstill failing: ${o.error}\n`;

/**
 * `npm run projections:parked`: the events projections and sagas set aside because they
 * could not handle them (or held behind one of those), and their replay or skip after a fix.
 */
async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== undefined && command !== 'list' && command !== 'replay' && command !== 'skip') {
    process.stderr.write(USAGE);
    return 2;
  }
  const all = command === 'replay' && rest.includes('--all');
  const ids = rest.filter((a) => a !== '--all').map(Number);
  const badIds = ids.some((n) => !Number.isSafeInteger(n) || n <= 0);
  if ((command === 'replay' && (badIds || (ids.length === 0) === !all)) || (command === 'skip' && (badIds || ids.length === 0 || rest.includes('--all')))) {
    process.stderr.write(USAGE);
    return 2;
  }
  return withOperatorContext(async ({ db, store, config, logger }) => {
    if (command !== 'replay' && command !== 'skip') {
      process.stdout.write(describeParked(await listParked(db.knex), await listBlockedStreams(db.knex)));
      return 0;
    }
    const chosen = await listParked(db.knex, ids.length ? { ids } : {});
    const missing = ids.filter((id) => !chosen.some((p) => p.id === id));
    if (missing.length) process.stderr.write(`no parked event with id ${missing.join(', ')}\n`);
    const mailer = new Mailer({ knex: db.knex, smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, logger });
    const textMessages = TextMessenger.fromConfig(db.knex, config, { logger });
    const deps = { store, knex: db.knex, clock: systemClock, mailer, textMessages, secretBox: new SecretBox(config.SECRETS_ENCRYPTION_KEY, config.SECRETS_ENCRYPTION_KEY_PREVIOUS), config, logger, projections: allProjections(), sagas: allSagas() };
    const outcomes = await (command === 'skip' ? skipParked(deps, chosen) : replayParked(deps, chosen)).finally(() => mailer.close());
    for (const o of outcomes) process.stdout.write(describeOutcome(o));
    return outcomes.every((o) => o.replayed || 'skipped' in o) && missing.length === 0 ? 0 : 1;
  });
}

runOperatorCommand(main);

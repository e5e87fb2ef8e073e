import { randomUUID } from 'node:crypto';
import { foldRecorded, streamIdOf } from '../../src/commands/aggregate.js';
import { loadLeadSettings } from '../../src/commands/leads/lead-commands.js';
import { opportunityAggregate, type OpportunityCommand, type OpportunityContext } from '../../src/commands/opportunities/opportunity-aggregate.js';
import { defaultPipelineId } from '../../src/commands/lead-settings/lead-settings.js';
import { openStages } from '../../src/commands/leads/lead-stages.js';
import { loadOpportunitySettings } from '../../src/commands/opportunity-settings/opportunity-settings.js';
import type { EventStore } from '../../src/events/store/types.js';

const DAY_MS = 86_400_000;
/** Concurrent appenders: each create is one append (one round trip). */
const APPENDERS = 8;

/**
 * The n-th seeded deal: expected close dates spread over a year around `now` (so about a
 * quarter of them fall in the current quarter), the default pipeline's open stages in turn,
 * one in ten won and one in ten lost (closed at a time spread over the past half year).
 */
function dealCommands(n: number, id: string, accountId: string, ownerId: string, now: number, stageIds: string[]) {
  const day = (offset: number) => new Date(now + offset * DAY_MS).toISOString().slice(0, 10);
  const commands: OpportunityCommand[] = [
    {
      kind: 'create',
      id,
      input: {
        name: `Forecast deal ${n}`, accountId, stageId: stageIds[n % stageIds.length], amount: 1000 + (n % 97) * 50,
        expectedCloseDate: day((n % 365) - 182), source: null, description: null, customFields: {}, ownerId,
      },
    },
  ];
  if (n % 10 === 3) commands.push({ kind: 'close-won', id, closeDate: day(-(n % 180)), finalAmount: null, notes: null });
  if (n % 10 === 7) commands.push({ kind: 'close-lost', id, closeReasonId: null, competitorName: null, notes: null });
  return { commands, at: n % 10 === 7 ? new Date(now - (n % 180) * DAY_MS) : new Date(now) };
}

/**
 * Seeds `count` opportunities of one tenant fast: each deal's events are decided by the
 * opportunity decider (the events POST, close-won and close-lost would write, against the
 * tenant's real settings) and appended in one go, eight streams at a time. Skipped on
 * purpose: HTTP, the usage guards and the wait for the projections, which the timed POST
 * measures; the service's projections then catch up on their own.
 */
export async function seedOpportunities(
  store: EventStore,
  tenant: { tenantId: string; userId: string },
  accountIds: string[],
  count: number,
): Promise<void> {
  const context: OpportunityContext = {
    pipelines: await loadLeadSettings(store, tenant.tenantId),
    settings: await loadOpportunitySettings(store, tenant.tenantId),
    now: new Date(),
  };
  const pipelineId = defaultPipelineId(context.pipelines);
  if (!pipelineId) throw new Error('the bench tenant has no default pipeline');
  const stageIds = openStages(context.pipelines, pipelineId, 'opportunities').map((s) => s.id);
  const now = Date.now();
  let next = 0;
  const seedOne = async (n: number) => {
    const id = randomUUID();
    const { commands, at } = dealCommands(n, id, accountIds[n % accountIds.length], tenant.userId, now, stageIds);
    let state = opportunityAggregate.initialState;
    const events = [];
    for (const command of commands) {
      const decided = opportunityAggregate.decide(command, state, { ...context, now: at });
      state = foldRecorded(opportunityAggregate, decided as never, state);
      events.push(...decided);
    }
    const metadata = { tenantId: tenant.tenantId, userId: tenant.userId, correlationId: randomUUID(), causationId: null };
    await store.appendToStream(
      streamIdOf(opportunityAggregate, id),
      events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata, createdAt: at })),
      { expectedRevision: 'no_stream' },
    );
  };
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      while (next < count) await seedOne(next++);
    }),
  );
}

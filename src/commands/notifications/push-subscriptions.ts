import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { notFound } from '../../domain/errors.js';
import type { PushSubscriptionEvent, PushUnsubscribeReason } from '../../events/push.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';
import { ensureVapidKeys } from './push-keys.js';

/** A user's subscriptions by endpoint, with the key generation each was made for. */
export interface PushSubscriptionsState {
  byEndpoint: ReadonlyMap<string, { subscriptionId: string; keyGeneration: number }>;
}

export type PushSubscriptionCommand =
  | { kind: 'subscribe'; userId: string; subscriptionId: string; endpoint: string; keyGeneration: number }
  | { kind: 'unsubscribe'; userId: string; endpoint: string; reason: PushUnsubscribeReason };

function decide(command: PushSubscriptionCommand, state: PushSubscriptionsState): PushSubscriptionEvent[] {
  const known = state.byEndpoint.get(command.endpoint);
  switch (command.kind) {
    case 'subscribe': {
      // Browsers send their subscription again on every visit: the same one for the same keys changes nothing.
      if (known && known.keyGeneration === command.keyGeneration) return [];
      const { kind: _kind, ...data } = command;
      return [{ type: 'PushSubscribed', data }];
    }
    case 'unsubscribe':
      if (!known) {
        // A push service's "gone" for a subscription already ended is nothing to do; a user's unsubscribe of one they do not have is a 404.
        if (command.reason === 'expired') return [];
        throw notFound('Push subscription');
      }
      return [{ type: 'PushUnsubscribed', data: { userId: command.userId, subscriptionId: known.subscriptionId, endpoint: command.endpoint, reason: command.reason } }];
  }
}

function evolve(state: PushSubscriptionsState, event: PushSubscriptionEvent): PushSubscriptionsState {
  const byEndpoint = new Map(state.byEndpoint);
  switch (event.type) {
    case 'PushSubscribed':
      byEndpoint.set(event.data.endpoint, { subscriptionId: event.data.subscriptionId, keyGeneration: event.data.keyGeneration });
      return { byEndpoint };
    case 'PushUnsubscribed':
      byEndpoint.delete(event.data.endpoint);
      return { byEndpoint };
    default:
      return state;
  }
}

/** One stream per user (`push-subscriptions-<userId>`): subscribe (upsert by endpoint), unsubscribe. */
export const pushSubscriptionsAggregate: Aggregate<PushSubscriptionsState, PushSubscriptionEvent, PushSubscriptionCommand> = {
  streamPrefix: 'push-subscriptions',
  initialState: { byEndpoint: new Map() },
  evolve,
  decide,
};

type PushDeps = CommandDeps & { knex: Knex; secretBox: SecretBox };

/** The same endpoint subscribed by the same user keeps its id. */
export const pushSubscriptionId = (userId: string, endpoint: string) => deterministicId('push-subscription', userId, endpoint);

/** Keys the browser keys by endpoint: one browser (endpoint) belongs to one user at a time, whichever subscribed it last. */
const endpointDigest = (endpoint: string) => createHash('sha256').update(endpoint).digest('hex');

export interface BrowserSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/**
 * Subscribes the caller's browser for the tenant's current keys. Its keys go to the
 * write-side table first (so a delivery right after the response finds them); a browser
 * another user had subscribed now belongs to the caller, and the other user's pushes no
 * longer reach it.
 */
export async function subscribeToPush(deps: PushDeps, ctx: CommandContext & { userId: string }, subscription: BrowserSubscription) {
  const { generation } = await ensureVapidKeys(deps, ctx);
  const { endpoint, keys } = subscription;
  const row = { endpoint_digest: endpointDigest(endpoint) };
  await deps.knex('push_subscription_keys')
    .insert({
      ...row,
      endpoint,
      tenant_id: ctx.tenantId,
      user_id: ctx.userId,
      p256dh: keys.p256dh,
      auth: deps.secretBox.seal(SEALED_COLUMNS.pushAuthSecret, row, keys.auth),
      key_generation: generation,
      updated_at: deps.clock.now(),
    })
    .onConflict('endpoint_digest')
    .merge();
  const subscriptionId = pushSubscriptionId(ctx.userId, endpoint);
  const result = await handleCommand(deps, pushSubscriptionsAggregate, ctx.userId, { kind: 'subscribe', userId: ctx.userId, subscriptionId, endpoint, keyGeneration: generation }, ctx);
  return { subscriptionId, position: result.position };
}

/** Ends a subscription of `userId` (the caller's own, or one a push service said is gone); its browser keys go too. */
export async function unsubscribeFromPush(deps: PushDeps, ctx: CommandContext, userId: string, endpoint: string, reason: PushUnsubscribeReason) {
  const result = await handleCommand(deps, pushSubscriptionsAggregate, userId, { kind: 'unsubscribe', userId, endpoint, reason }, ctx);
  await deps.knex('push_subscription_keys').where({ endpoint_digest: endpointDigest(endpoint), tenant_id: ctx.tenantId, user_id: userId }).delete();
  return { position: result.position };
}

import { expect } from 'chai';
import { pushKeysAggregate } from '../../src/commands/notifications/push-keys.js';
import { pushSubscriptionsAggregate } from '../../src/commands/notifications/push-subscriptions.js';
import { vapidSubject } from '../../src/infra/push/web-push.js';
import type { PushKeysEvent, PushSubscriptionEvent } from '../../src/events/push.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const TENANT = '00000000-0000-4000-8000-0000000000aa';
const USER = '00000000-0000-4000-8000-0000000000bb';
const SUB = '00000000-0000-4000-8000-0000000000cc';
const ENDPOINT = 'https://push.example.com/send/abc';
const OTHER_ENDPOINT = 'https://push.example.com/send/def';

const keysGenerated = (generation: number, publicKey = `key-${generation}`): PushKeysEvent => ({
  type: 'PushKeysGenerated',
  data: { tenantId: TENANT, publicKey, generation },
});

describe('push keys decider', () => {
  const spec = deciderSpec(pushKeysAggregate);

  it('tells the first-use pair as generation 1, once', () => {
    spec.given([]).when({ kind: 'generate', tenantId: TENANT, publicKey: 'key-1', generation: 1 }, { stored: 0 }).then([keysGenerated(1)]);
    spec.given([keysGenerated(1)]).when({ kind: 'generate', tenantId: TENANT, publicKey: 'other', generation: 1 }, { stored: 1 }).then([]);
  });

  it('regenerates past both the stream and the stored pair (a stream cut short may be behind the table)', () => {
    spec.given([keysGenerated(1)]).when({ kind: 'generate', tenantId: TENANT, publicKey: 'key-2', generation: null }, { stored: 1 }).then([keysGenerated(2)]);
    spec.given([]).when({ kind: 'generate', tenantId: TENANT, publicKey: 'key-2', generation: null }, { stored: 1 }).then([keysGenerated(2)]);
    const decision = spec.given([keysGenerated(1), keysGenerated(2)]).when({ kind: 'generate', tenantId: TENANT, publicKey: 'key-3', generation: null }, { stored: 0 });
    decision.then([keysGenerated(3)]);
    expect(decision.state).to.deep.equal({ generation: 3 });
  });
});

describe('push subscriptions decider', () => {
  const spec = deciderSpec(pushSubscriptionsAggregate);
  const subscribe = (keyGeneration: number, endpoint = ENDPOINT) => ({ kind: 'subscribe' as const, userId: USER, subscriptionId: SUB, endpoint, keyGeneration });
  const subscribed = (keyGeneration: number, endpoint = ENDPOINT): PushSubscriptionEvent => ({
    type: 'PushSubscribed',
    data: { userId: USER, subscriptionId: SUB, endpoint, keyGeneration },
  });
  const unsubscribed = (reason: 'unsubscribed' | 'expired'): PushSubscriptionEvent => ({
    type: 'PushUnsubscribed',
    data: { userId: USER, subscriptionId: SUB, endpoint: ENDPOINT, reason },
  });

  it('subscribes an endpoint; the same one again for the same keys changes nothing', () => {
    spec.given([]).when(subscribe(1)).then([subscribed(1)]);
    spec.given([subscribed(1)]).when(subscribe(1)).then([]);
  });

  it('subscribes the endpoint again once the tenant\'s keys changed (the old subscription is void)', () => {
    spec.given([subscribed(1)]).when(subscribe(2)).then([subscribed(2)]);
  });

  it('unsubscribes a subscribed endpoint, after which it can be subscribed again', () => {
    const decision = spec.given([subscribed(1)]).when({ kind: 'unsubscribe', userId: USER, endpoint: ENDPOINT, reason: 'unsubscribed' });
    decision.then([unsubscribed('unsubscribed')]);
    expect(decision.state.byEndpoint.size).to.equal(0);
    spec.given([subscribed(1), unsubscribed('unsubscribed')]).when(subscribe(1)).then([subscribed(1)]);
  });

  it('refuses to unsubscribe an endpoint the user does not have (404); a push service\'s "gone" for it changes nothing', () => {
    spec.given([subscribed(1)]).when({ kind: 'unsubscribe', userId: USER, endpoint: OTHER_ENDPOINT, reason: 'unsubscribed' }).then(refused('not_found', /Push subscription/));
    spec.given([subscribed(1), unsubscribed('expired')]).when({ kind: 'unsubscribe', userId: USER, endpoint: ENDPOINT, reason: 'unsubscribed' }).then(refused('not_found'));
    spec.given([]).when({ kind: 'unsubscribe', userId: USER, endpoint: ENDPOINT, reason: 'expired' }).then([]);
    spec.given([subscribed(1)]).when({ kind: 'unsubscribe', userId: USER, endpoint: ENDPOINT, reason: 'expired' }).then([unsubscribed('expired')]);
  });
});

describe('VAPID subject', () => {
  it('is a mailto: of the service\'s mail sender', () => {
    expect(vapidSubject('CRM <no-reply@crm.local>')).to.equal('mailto:no-reply@crm.local');
    expect(vapidSubject('ops@example.com')).to.equal('mailto:ops@example.com');
  });
});

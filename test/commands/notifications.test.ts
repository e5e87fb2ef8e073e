import { expect } from 'chai';
import { notificationAggregate } from '../../src/commands/notifications/notification-aggregate.js';
import { channelsFor, notificationPreferencesAggregate } from '../../src/commands/notifications/notification-preferences.js';
import { notificationSettingsAggregate, notificationSettingsSeed } from '../../src/commands/notifications/notification-settings.js';
import { DEFAULT_NOTIFICATION_SETTINGS, NOTIFICATION_TYPE_NAMES } from '../../src/domain/notifications.js';
import type { NotificationEvent, NotificationFields, NotificationPreferencesEvent, NotificationSettingsEvent } from '../../src/events/notifications.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const ID = '00000000-0000-4000-8000-000000000001';
const USER = '00000000-0000-4000-8000-0000000000aa';
const OTHER_USER = '00000000-0000-4000-8000-0000000000bb';
const AT = '2026-01-05T09:00:00.000Z';

const fields: NotificationFields = {
  id: ID, userId: USER, type: 'lead_assigned', title: 'Lead assigned to you', message: 'Ada assigned you Acme', entityType: 'leads', entityId: ID,
  channels: ['inApp'], deliveries: [],
};
const created: NotificationEvent = { type: 'NotificationCreated', data: fields };
const read: NotificationEvent = { type: 'NotificationRead', data: { id: ID, userId: USER, readAt: AT } };
const dismissed: NotificationEvent = { type: 'NotificationDismissed', data: { id: ID, userId: USER, dismissedAt: AT } };

describe('notification decider', () => {
  const spec = deciderSpec(notificationAggregate);

  it('creates a notification once; creating it again (a repeated trigger) changes nothing', () => {
    spec.given([]).when({ kind: 'create', fields }).then([created]);
    spec.given([created]).when({ kind: 'create', fields: { ...fields, title: 'Again' } }).then([]);
  });

  it('its recipient reads it once; reading again changes nothing', () => {
    spec.given([created]).when({ kind: 'read', userId: USER, at: AT }).then([read]);
    spec.given([created, read]).when({ kind: 'read', userId: USER, at: AT }).then([]);
  });

  it('its recipient dismisses it, read or not; a dismissed one is not found any more', () => {
    spec.given([created]).when({ kind: 'dismiss', userId: USER, at: AT }).then([dismissed]);
    spec.given([created, read]).when({ kind: 'dismiss', userId: USER, at: AT }).then([dismissed]);
    spec.given([created, dismissed]).when({ kind: 'dismiss', userId: USER, at: AT }).then(refused('not_found'));
    spec.given([created, dismissed]).when({ kind: 'read', userId: USER, at: AT }).then(refused('not_found'));
  });

  it('another user, or a notification that does not exist, is not found', () => {
    spec.given([created]).when({ kind: 'read', userId: OTHER_USER, at: AT }).then(refused('not_found'));
    spec.given([created]).when({ kind: 'dismiss', userId: OTHER_USER, at: AT }).then(refused('not_found'));
    spec.given([]).when({ kind: 'read', userId: USER, at: AT }).then(refused('not_found'));
    spec.given([]).when({ kind: 'dismiss', userId: USER, at: AT }).then(refused('not_found'));
  });
});

describe('notification preferences decider', () => {
  const spec = deciderSpec(notificationPreferencesAggregate);
  const set = (event: string, channels: Record<string, boolean>): NotificationPreferencesEvent => ({
    type: 'NotificationPreferenceSet', data: { userId: USER, event, channels: channels as any },
  });

  it('sets flags over the type’s defaults; flags left out keep their value', () => {
    spec.given([]).when({ kind: 'set', userId: USER, preferences: [{ event: 'task_due', channels: { email: false } }] })
      .then([set('task_due', { inApp: true, email: false, push: true, sms: false })]);
    const earlier = set('task_due', { inApp: true, email: false, push: true, sms: false });
    spec.given([earlier]).when({ kind: 'set', userId: USER, preferences: [{ event: 'task_due', channels: { sms: true } }] })
      .then([set('task_due', { inApp: true, email: false, push: true, sms: true })]);
  });

  it('an unchanged stored preference appends nothing; several events at once each get theirs', () => {
    const earlier = set('mention', { inApp: true, email: true, push: false, sms: false });
    spec.given([earlier]).when({ kind: 'set', userId: USER, preferences: [{ event: 'mention', channels: { push: false } }] }).then([]);
    const decision = spec.given([]).when({
      kind: 'set', userId: USER, preferences: [{ event: 'mention', channels: { push: false } }, { event: 'lead_assigned', channels: { inApp: false } }],
    });
    decision.then([set('mention', { inApp: true, email: true, push: false, sms: false }), set('lead_assigned', { inApp: false, email: true, push: false, sms: false })]);
    expect(channelsFor(decision.state, 'lead_assigned').inApp).to.equal(false);
    expect(channelsFor(decision.state, 'task_due')).to.deep.equal({ inApp: true, email: true, push: true, sms: false });
  });

  it('refuses an unknown event (400), a prototype name included', () => {
    for (const event of ['nope', '__proto__', 'constructor']) {
      spec.given([]).when({ kind: 'set', userId: USER, preferences: [{ event, channels: { email: false } }] }).then(refused('invalid', /Unknown notification event/));
    }
  });

  it('reads the reference client’s names: task_due_reminder sets task_due; names with nothing here (meeting_*, task_overdue) are refused as unsupported', () => {
    spec.given([]).when({ kind: 'set', userId: USER, preferences: [{ event: 'task_due_reminder', channels: { email: false } }] })
      .then([set('task_due', { inApp: true, email: false, push: true, sms: false })]);
    for (const event of ['meeting_booked', 'meeting_reminder', 'task_overdue']) {
      spec.given([]).when({ kind: 'set', userId: USER, preferences: [{ event, channels: { email: false } }] }).then(refused('invalid', /Unsupported notification event/));
    }
  });

  it('sets and clears the time zone; an unknown zone is refused', () => {
    const paris: NotificationPreferencesEvent = { type: 'NotificationTimeZoneSet', data: { userId: USER, timeZone: 'Europe/Paris' } };
    spec.given([]).when({ kind: 'set-time-zone', userId: USER, timeZone: 'Europe/Paris' }).then([paris]);
    spec.given([paris]).when({ kind: 'set-time-zone', userId: USER, timeZone: 'Europe/Paris' }).then([]);
    spec.given([paris]).when({ kind: 'set-time-zone', userId: USER, timeZone: null }).then([{ type: 'NotificationTimeZoneSet', data: { userId: USER, timeZone: null } }]);
    spec.given([]).when({ kind: 'set-time-zone', userId: USER, timeZone: 'Mars/Olympus' }).then(refused('invalid', /time zone/));
  });
});

describe('notification settings decider', () => {
  const spec = deciderSpec(notificationSettingsAggregate);
  let n = 0;
  const seed = notificationSettingsSeed(() => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`);
  const template = seed[0] as Extract<NotificationSettingsEvent, { type: 'NotificationTemplateCreated' }>;

  it('seeds an active email template per notification type, once', () => {
    expect(seed.map((e) => (e.data as any).event)).to.deep.equal(NOTIFICATION_TYPE_NAMES);
    spec.given([]).when({ kind: 'seed', events: seed }).then(seed);
    spec.given(seed).when({ kind: 'seed', events: seed }).then([]);
  });

  it('a tenant seeded before a type existed gets only the missing templates; one it has (edited or not) is never seeded again', () => {
    const isNew = (e: NotificationSettingsEvent) => ['task_completed', 'opportunity_assigned'].includes((e.data as any).event);
    const older = seed.filter((e) => !isNew(e));
    const edited: NotificationSettingsEvent = { type: 'NotificationTemplateUpdated', data: { id: template.data.id, changes: { subject: 'Mine' } } };
    const decision = spec.given([...older, edited]).when({ kind: 'seed', events: notificationSettingsSeed(() => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`) });
    expect(decision.events.map((e) => (e.data as any).event)).to.have.members(['task_completed', 'opportunity_assigned']);
    expect(decision.state.templates[template.data.id].subject).to.equal('Mine');
    spec.given([...older, ...decision.events]).when({ kind: 'seed', events: seed }).then([]);
  });

  it('updates a template’s subject, body and switch with what changed; an unknown template is not found', () => {
    spec.given(seed).when({ kind: 'update-template', id: template.data.id, changes: { subject: 'New: {{leadName}}', isActive: true } })
      .then([{ type: 'NotificationTemplateUpdated', data: { id: template.data.id, changes: { subject: 'New: {{leadName}}' } } }]);
    spec.given(seed).when({ kind: 'update-template', id: template.data.id, changes: { subject: template.data.subject } }).then([]);
    spec.given(seed).when({ kind: 'update-template', id: '00000000-0000-4000-8000-999999999999', changes: { isActive: false } }).then(refused('not_found'));
    spec.given(seed).when({ kind: 'update-template', id: '__proto__', changes: { isActive: false } }).then(refused('not_found'));
  });

  it('changes global settings over the defaults, only what differs', () => {
    const decision = spec.given(seed).when({ kind: 'change-settings', changes: { quietHoursEnabled: true, digestTime: '09:00' } });
    decision.then([{ type: 'NotificationSettingsChanged', data: { changes: { quietHoursEnabled: true } } }]);
    expect(decision.state.settings).to.deep.equal({ ...DEFAULT_NOTIFICATION_SETTINGS, quietHoursEnabled: true });
    spec.given(seed).when({ kind: 'change-settings', changes: { emailEnabled: true } }).then([]);
  });
});

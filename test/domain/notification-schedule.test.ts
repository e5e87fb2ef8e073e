import { expect } from 'chai';
import { inQuietHours, nextLocalTime, planDelivery } from '../../src/domain/notification-schedule.js';
import { DEFAULT_NOTIFICATION_SETTINGS, mentionsIn, renderHtml, renderTemplate } from '../../src/domain/notifications.js';

const quiet = { ...DEFAULT_NOTIFICATION_SETTINGS, quietHoursEnabled: true, quietHoursStart: '22:00', quietHoursEnd: '07:00' };

describe('notification schedule', () => {
  it('quiet hours wrap midnight, in the given time zone', () => {
    expect(inQuietHours(new Date('2026-01-05T21:59:00Z'), quiet, 'UTC')).to.equal(false);
    expect(inQuietHours(new Date('2026-01-05T22:00:00Z'), quiet, 'UTC')).to.equal(true);
    expect(inQuietHours(new Date('2026-01-06T06:59:00Z'), quiet, 'UTC')).to.equal(true);
    expect(inQuietHours(new Date('2026-01-06T07:00:00Z'), quiet, 'UTC')).to.equal(false);
    // 21:30 UTC is 22:30 in Paris (winter).
    expect(inQuietHours(new Date('2026-01-05T21:30:00Z'), quiet, 'Europe/Paris')).to.equal(true);
    expect(inQuietHours(new Date('2026-01-05T23:00:00Z'), { ...quiet, quietHoursEnabled: false }, 'UTC')).to.equal(false);
    expect(inQuietHours(new Date('2026-01-05T23:00:00Z'), { ...quiet, quietHoursEnd: '22:00' }, 'UTC')).to.equal(false);
  });

  it('the next wall-clock time is the first one after now, across a DST change', () => {
    expect(nextLocalTime(new Date('2026-01-05T22:30:00Z'), '07:00', 'UTC').toISOString()).to.equal('2026-01-06T07:00:00.000Z');
    expect(nextLocalTime(new Date('2026-01-05T06:00:00Z'), '07:00', 'UTC').toISOString()).to.equal('2026-01-05T07:00:00.000Z');
    expect(nextLocalTime(new Date('2026-01-05T22:30:00Z'), '07:00', 'America/New_York').toISOString()).to.equal('2026-01-06T12:00:00.000Z');
    // Paris moves to summer time on 2026-03-29: 07:00 that morning is 05:00 UTC.
    expect(nextLocalTime(new Date('2026-03-28T23:00:00Z'), '07:00', 'Europe/Paris').toISOString()).to.equal('2026-03-29T05:00:00.000Z');
  });

  it('plans at once outside quiet hours; held until they end; into the digest unless urgent', () => {
    const night = new Date('2026-01-05T23:00:00Z');
    expect(planDelivery(new Date('2026-01-05T12:00:00Z'), quiet, 'UTC', false)).to.deep.equal({ dueAt: new Date('2026-01-05T12:00:00Z'), digest: false });
    expect(planDelivery(night, { ...quiet, digestFrequency: 'none' }, 'UTC', false)).to.deep.equal({ dueAt: new Date('2026-01-06T07:00:00Z'), digest: false });
    expect(planDelivery(night, quiet, 'UTC', false)).to.deep.equal({ dueAt: new Date('2026-01-06T09:00:00Z'), digest: true });
    expect(planDelivery(night, quiet, 'UTC', true)).to.deep.equal({ dueAt: new Date('2026-01-06T07:00:00Z'), digest: false });
  });

  it('renders {{variables}}, escaping values (not the template) for HTML', () => {
    expect(renderTemplate('Hi {{ user.firstName }}: {{title}}{{missing}}', { 'user.firstName': 'Ada', title: '<b>' })).to.equal('Hi Ada: <b>');
    expect(renderHtml('Hi {{name}}\nbye', { name: '<script>&' })).to.equal('Hi &lt;script&gt;&amp;<br>\nbye');
    expect(renderTemplate('{{constructor}}{{__proto__}}', {})).to.equal('');
  });

  it('finds mentions by id and by email', () => {
    const id = '0B8B4A36-6F7E-4C58-9F4E-3A2D7E1C0A11';
    expect(mentionsIn(`Hi @[Ada L](${id}), and @bob@example.com. Not mail@example.com`)).to.deep.equal({
      userIds: [id.toLowerCase()], emails: ['bob@example.com'],
    });
  });
});

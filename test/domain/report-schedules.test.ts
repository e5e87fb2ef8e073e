import { expect } from 'chai';
import { isTimeZone, nextRunAt, type ScheduleTiming } from '../../src/domain/report-schedules.js';

const at = (timing: Partial<ScheduleTiming>, now: string) =>
  nextRunAt({ frequency: 'daily', dayOfWeek: 1, dayOfMonth: 1, time: '08:00', timeZone: 'UTC', ...timing }, new Date(now)).toISOString();

describe('report schedule timing', () => {
  it('daily: today at the time if still ahead, else tomorrow (strictly after now)', () => {
    expect(at({}, '2026-03-02T07:59:00Z')).to.equal('2026-03-02T08:00:00.000Z');
    expect(at({}, '2026-03-02T08:00:00Z')).to.equal('2026-03-03T08:00:00.000Z');
  });
  it('weekly: the next matching weekday, a week ahead when today has passed', () => {
    // 2026-03-02 is a Monday.
    expect(at({ frequency: 'weekly', dayOfWeek: 3 }, '2026-03-02T09:00:00Z')).to.equal('2026-03-04T08:00:00.000Z');
    expect(at({ frequency: 'weekly', dayOfWeek: 1 }, '2026-03-02T09:00:00Z')).to.equal('2026-03-09T08:00:00.000Z');
    expect(at({ frequency: 'weekly', dayOfWeek: 0 }, '2026-03-02T09:00:00Z')).to.equal('2026-03-08T08:00:00.000Z');
  });
  it('monthly: the day of month, the last day in shorter months', () => {
    expect(at({ frequency: 'monthly', dayOfMonth: 15 }, '2026-03-20T00:00:00Z')).to.equal('2026-04-15T08:00:00.000Z');
    expect(at({ frequency: 'monthly', dayOfMonth: 31 }, '2026-02-01T00:00:00Z')).to.equal('2026-02-28T08:00:00.000Z');
    expect(at({ frequency: 'monthly', dayOfMonth: 31 }, '2026-04-01T00:00:00Z')).to.equal('2026-04-30T08:00:00.000Z');
  });
  it('keeps the wall-clock time across daylight-saving changes of the zone', () => {
    // Europe/Paris moves to summer time on 2026-03-29 (UTC+1 → UTC+2).
    const paris = { timeZone: 'Europe/Paris' };
    expect(at(paris, '2026-03-28T08:00:00Z')).to.equal('2026-03-29T06:00:00.000Z');
    expect(at(paris, '2026-03-27T12:00:00Z')).to.equal('2026-03-28T07:00:00.000Z');
    // 02:30 does not exist that night: it runs at 03:30 local (01:30 UTC).
    expect(at({ ...paris, time: '02:30' }, '2026-03-28T12:00:00Z')).to.equal('2026-03-29T01:30:00.000Z');
    // Back to winter time on 2026-10-25: 02:30 happens twice; the first one counts.
    expect(at({ ...paris, time: '02:30' }, '2026-10-24T12:00:00Z')).to.equal('2026-10-25T00:30:00.000Z');
    // The local day decides: 23:30 UTC on Monday is already Tuesday in Tokyo.
    expect(at({ frequency: 'weekly', dayOfWeek: 2, timeZone: 'Asia/Tokyo' }, '2026-03-02T23:30:00Z')).to.equal('2026-03-09T23:00:00.000Z');
  });
  it('knows IANA zones', () => {
    expect(isTimeZone('Europe/Paris')).to.equal(true);
    expect(isTimeZone('UTC')).to.equal(true);
    expect(isTimeZone('Mars/Olympus')).to.equal(false);
  });
});

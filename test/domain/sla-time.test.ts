import { expect } from 'chai';
import {
  addWorkingMinutes,
  formatDuration,
  workingHoursProblems,
  workingMinutesBetween,
  type WorkingHours,
} from '../../src/domain/sla-time.js';

// Calendar anchors used below (checked by hand): 2026-01-04 is a Sunday, 2026-01-05 a Monday,
// 2026-01-09 a Friday. US DST 2026: spring forward Sun 2026-03-08 02:00 EST -> 03:00 EDT,
// fall back Sun 2026-11-01 02:00 EDT -> 01:00 EST. New York is UTC-5 (EST) / UTC-4 (EDT).

const utc = (iso: string) => new Date(`${iso}Z`);
const MIN = 60_000;
const HOUR = 60 * MIN;

const officeUtc: WorkingHours = {
  workingHoursStart: '09:00',
  workingHoursEnd: '17:00',
  workingDays: [1, 2, 3, 4, 5],
  timezone: 'UTC',
};
const officeNewYork: WorkingHours = { ...officeUtc, timezone: 'America/New_York' };

describe('SLA working time', () => {
  describe('addWorkingMinutes (Mon–Fri 09:00–17:00 UTC)', () => {
    it('a lead created on Monday at 10:00 with 90 working minutes is due Monday at 11:30', () => {
      expect(addWorkingMinutes(utc('2026-01-05T10:00'), 90, officeUtc)).to.deep.equal(utc('2026-01-05T11:30'));
    });

    it('a lead whose deadline lands exactly at closing is due at closing, not the next morning', () => {
      expect(addWorkingMinutes(utc('2026-01-05T13:00'), 240, officeUtc)).to.deep.equal(utc('2026-01-05T17:00'));
    });

    it('a lead created on Monday at 16:00 with 2 working hours is due Tuesday at 10:00 (across the night)', () => {
      expect(addWorkingMinutes(utc('2026-01-05T16:00'), 120, officeUtc)).to.deep.equal(utc('2026-01-06T10:00'));
    });

    it('a lead created on Friday at 16:00 with 4 working hours is due Monday at 12:00 (across the weekend)', () => {
      expect(addWorkingMinutes(utc('2026-01-09T16:00'), 240, officeUtc)).to.deep.equal(utc('2026-01-12T12:00'));
    });

    it('a lead created on Friday at 17:00 with 4 working hours is due Monday at 13:00', () => {
      expect(addWorkingMinutes(utc('2026-01-09T17:00'), 240, officeUtc)).to.deep.equal(utc('2026-01-12T13:00'));
    });

    it('a lead created before opening starts counting at opening', () => {
      expect(addWorkingMinutes(utc('2026-01-05T07:30'), 60, officeUtc)).to.deep.equal(utc('2026-01-05T10:00'));
    });

    it('a lead created after closing starts counting at the next opening', () => {
      expect(addWorkingMinutes(utc('2026-01-05T18:00'), 30, officeUtc)).to.deep.equal(utc('2026-01-06T09:30'));
    });

    it('a lead created on a Sunday starts counting on Monday morning', () => {
      expect(addWorkingMinutes(utc('2026-01-04T12:00'), 60, officeUtc)).to.deep.equal(utc('2026-01-05T10:00'));
    });

    it('zero minutes inside working hours is the start itself', () => {
      expect(addWorkingMinutes(utc('2026-01-05T10:15:30'), 0, officeUtc)).to.deep.equal(utc('2026-01-05T10:15:30'));
    });

    it('zero minutes outside working hours is the start of the next working period', () => {
      expect(addWorkingMinutes(utc('2026-01-05T17:00'), 0, officeUtc)).to.deep.equal(utc('2026-01-06T09:00'));
      expect(addWorkingMinutes(utc('2026-01-10T11:00'), 0, officeUtc)).to.deep.equal(utc('2026-01-12T09:00'));
    });

    it('only the listed days are worked (Tue and Thu only)', () => {
      const tueThu = { ...officeUtc, workingDays: [2, 4] };
      // Mon 10:00 -> Tue 09:00..17:00 (480) -> Thu 09:00 + 60 = Thu 10:00
      expect(addWorkingMinutes(utc('2026-01-05T10:00'), 540, tueThu)).to.deep.equal(utc('2026-01-08T10:00'));
    });

    it('10,000 working hours ahead ends on the Friday of the 250th week', () => {
      // 600,000 min / 480 per day = 1,250 working days = exactly 250 Mon–Fri weeks.
      const due = addWorkingMinutes(utc('2026-01-05T09:00'), 10_000 * 60, officeUtc);
      expect(due).to.deep.equal(new Date(Date.UTC(2026, 0, 9 + 249 * 7, 17)));
    });

    it('10,000 working hours ahead in a DST zone round-trips', () => {
      const start = utc('2026-01-05T14:00'); // Monday 09:00 EST
      const due = addWorkingMinutes(start, 10_000 * 60, officeNewYork);
      expect(workingMinutesBetween(start, due, officeNewYork)).to.equal(10_000 * 60);
    });

    it('a negative or non-finite number of minutes is refused', () => {
      expect(() => addWorkingMinutes(utc('2026-01-05T10:00'), -1, officeUtc)).to.throw(RangeError);
      expect(() => addWorkingMinutes(utc('2026-01-05T10:00'), Number.NaN, officeUtc)).to.throw(RangeError);
      expect(() => addWorkingMinutes(utc('2026-01-05T10:00'), Infinity, officeUtc)).to.throw(RangeError);
    });

    it('an invalid start date is refused', () => {
      expect(() => addWorkingMinutes(new Date('nope'), 10, officeUtc)).to.throw(RangeError);
    });
  });

  describe('non-UTC zones', () => {
    it('a lead created on Friday at 16:00 New York time (EST) with 4 working hours is due Monday at 12:00 EST', () => {
      // Fri 2026-01-09 16:00 EST = 21:00Z; Mon 2026-01-12 12:00 EST = 17:00Z
      expect(addWorkingMinutes(utc('2026-01-09T21:00'), 240, officeNewYork)).to.deep.equal(utc('2026-01-12T17:00'));
    });

    it('working hours follow local time after the spring-forward weekend (due Monday 10:00 EDT, not EST)', () => {
      // Fri 2026-03-06 16:00 EST = 21:00Z: 1 h on Friday, 1 h on Monday -> Mon 10:00 EDT = 14:00Z
      expect(addWorkingMinutes(utc('2026-03-06T21:00'), 120, officeNewYork)).to.deep.equal(utc('2026-03-09T14:00'));
    });

    it('working hours follow local time after the fall-back weekend (due Monday 10:00 EST, not EDT)', () => {
      // Fri 2026-10-30 16:00 EDT = 20:00Z: 1 h on Friday, 1 h on Monday -> Mon 2026-11-02 10:00 EST = 15:00Z
      expect(addWorkingMinutes(utc('2026-10-30T20:00'), 120, officeNewYork)).to.deep.equal(utc('2026-11-02T15:00'));
    });

    it('the spring-forward week counts 8 working hours per weekday', () => {
      // Fri 2026-03-06 09:00 EST (14:00Z) to Mon 2026-03-09 17:00 EDT (21:00Z): Friday + Monday = 960 min
      expect(workingMinutesBetween(utc('2026-03-06T14:00'), utc('2026-03-09T21:00'), officeNewYork)).to.equal(960);
      // Mon 2026-03-02 00:00 EST to Mon 2026-03-09 00:00 EDT: five full days
      expect(workingMinutesBetween(utc('2026-03-02T05:00'), utc('2026-03-09T04:00'), officeNewYork)).to.equal(2400);
    });

    it('a round-the-clock Sunday is 23 hours long on spring-forward day and 25 on fall-back day', () => {
      const sundays: WorkingHours = { ...officeNewYork, workingHoursStart: '00:00', workingHoursEnd: '24:00', workingDays: [0] };
      // Sat 2026-03-07 12:00 EST to Mon 2026-03-09 12:00 EDT covers all of Sunday
      expect(workingMinutesBetween(utc('2026-03-07T17:00'), utc('2026-03-09T16:00'), sundays)).to.equal(23 * 60);
      expect(workingMinutesBetween(utc('2026-10-31T16:00'), utc('2026-11-02T17:00'), sundays)).to.equal(25 * 60);
      // the whole of an ordinary Sunday
      expect(workingMinutesBetween(utc('2026-01-03T17:00'), utc('2026-01-05T17:00'), sundays)).to.equal(24 * 60);
    });

    it('a shift spanning the skipped hour counts only the local minutes that exist', () => {
      // 01:00–04:00 on Sundays. On 2026-03-08 local 02:00–03:00 does not exist:
      // 01:00–02:00 EST (06:00Z–07:00Z) + 03:00–04:00 EDT (07:00Z–08:00Z) = 120 min
      const night: WorkingHours = { ...officeNewYork, workingHoursStart: '01:00', workingHoursEnd: '04:00', workingDays: [0] };
      expect(workingMinutesBetween(utc('2026-03-07T12:00'), utc('2026-03-09T12:00'), night)).to.equal(120);
      // 01:00 EST + 90 min: 60 min to the jump, then 30 more -> 03:30 EDT = 07:30Z
      expect(addWorkingMinutes(utc('2026-03-08T06:00'), 90, night)).to.deep.equal(utc('2026-03-08T07:30'));
    });

    it('a shift opening at a skipped local time opens when the clock jumps past it', () => {
      // 02:30–05:00 on Sundays: on 2026-03-08 the first local time >= 02:30 is 03:00 EDT = 07:00Z
      const night: WorkingHours = { ...officeNewYork, workingHoursStart: '02:30', workingHoursEnd: '05:00', workingDays: [0] };
      expect(addWorkingMinutes(utc('2026-03-07T12:00'), 0, night)).to.deep.equal(utc('2026-03-08T07:00'));
      // 03:00 EDT to 05:00 EDT
      expect(workingMinutesBetween(utc('2026-03-07T12:00'), utc('2026-03-09T12:00'), night)).to.equal(120);
    });

    it('a shift covering the repeated hour counts both occurrences', () => {
      // 00:00–03:00 on Sundays; on 2026-11-01 local 01:00–02:00 happens twice:
      // 00:00 EDT (04:00Z) to 03:00 EST (08:00Z) = 240 min
      const night: WorkingHours = { ...officeNewYork, workingHoursStart: '00:00', workingHoursEnd: '03:00', workingDays: [0] };
      expect(workingMinutesBetween(utc('2026-10-31T12:00'), utc('2026-11-02T12:00'), night)).to.equal(240);
    });

    it('a shift partly inside the repeated hour counts only the minutes whose local time is inside it', () => {
      // 01:30–02:30 on Sundays. On 2026-11-01: 01:30–02:00 EDT (05:30Z–06:00Z) = 30 min, then the
      // clock goes back to 01:00 EST; 01:00–01:30 EST is before the shift; 01:30–02:30 EST
      // (06:30Z–07:30Z) = 60 min. Total 90.
      const night: WorkingHours = { ...officeNewYork, workingHoursStart: '01:30', workingHoursEnd: '02:30', workingDays: [0] };
      expect(workingMinutesBetween(utc('2026-10-31T12:00'), utc('2026-11-02T12:00'), night)).to.equal(90);
      // 45 min: 30 before the clock goes back, 15 after 01:30 EST -> 01:45 EST = 06:45Z
      expect(addWorkingMinutes(utc('2026-10-31T12:00'), 45, night)).to.deep.equal(utc('2026-11-01T06:45'));
      // 30 min ends exactly as the first piece ends (02:00 EDT = 06:00Z)
      expect(addWorkingMinutes(utc('2026-10-31T12:00'), 30, night)).to.deep.equal(utc('2026-11-01T06:00'));
    });

    it('weekdays are local: a lead at Sunday 23:30 UTC is Monday 08:30 in Tokyo and due at 10:00 JST', () => {
      const tokyo = { ...officeUtc, timezone: 'Asia/Tokyo' }; // UTC+9, no DST
      // Mon 2026-01-05 10:00 JST = Mon 01:00Z
      expect(addWorkingMinutes(utc('2026-01-04T23:30'), 60, tokyo)).to.deep.equal(utc('2026-01-05T01:00'));
    });

    it('Paris hours are an hour ahead of UTC in winter', () => {
      const paris = { ...officeUtc, timezone: 'Europe/Paris' }; // CET = UTC+1
      // Fri 2026-01-09 16:00 CET (15:00Z) + 4 h -> Mon 12:00 CET = 11:00Z
      expect(addWorkingMinutes(utc('2026-01-09T15:00'), 240, paris)).to.deep.equal(utc('2026-01-12T11:00'));
    });
  });

  describe('workingMinutesBetween', () => {
    it('counts minutes inside one working day', () => {
      expect(workingMinutesBetween(utc('2026-01-05T10:00'), utc('2026-01-05T11:30'), officeUtc)).to.equal(90);
    });

    it('skips the night: Monday 16:00 to Tuesday 10:00 is 2 working hours', () => {
      expect(workingMinutesBetween(utc('2026-01-05T16:00'), utc('2026-01-06T10:00'), officeUtc)).to.equal(120);
    });

    it('skips the weekend: Friday 16:00 to Monday 12:00 is 4 working hours', () => {
      expect(workingMinutesBetween(utc('2026-01-09T16:00'), utc('2026-01-12T12:00'), officeUtc)).to.equal(240);
    });

    it('a whole week (Monday 00:00 to Monday 00:00) is 5 × 8 working hours', () => {
      expect(workingMinutesBetween(utc('2026-01-05T00:00'), utc('2026-01-12T00:00'), officeUtc)).to.equal(2400);
    });

    it('time entirely outside working hours counts as zero', () => {
      expect(workingMinutesBetween(utc('2026-01-05T17:00'), utc('2026-01-06T09:00'), officeUtc)).to.equal(0);
      expect(workingMinutesBetween(utc('2026-01-10T00:00'), utc('2026-01-11T23:59'), officeUtc)).to.equal(0);
    });

    it('is zero when `to` is not after `from`', () => {
      expect(workingMinutesBetween(utc('2026-01-05T12:00'), utc('2026-01-05T12:00'), officeUtc)).to.equal(0);
      expect(workingMinutesBetween(utc('2026-01-06T12:00'), utc('2026-01-05T12:00'), officeUtc)).to.equal(0);
    });

    it('is exact to the second, so partial minutes show as fractions', () => {
      expect(workingMinutesBetween(utc('2026-01-05T10:00'), utc('2026-01-05T10:00:30'), officeUtc)).to.equal(0.5);
    });

    it('agrees with addWorkingMinutes: the minutes added are the minutes between (round trip)', () => {
      // Starts every 7 hours over two weeks, so inside, before, after hours and on weekends,
      // including the New York spring-forward weekend.
      const first = utc('2026-03-02T03:00').getTime();
      for (let k = 0; k < 48; k++) {
        const start = new Date(first + k * 7 * HOUR);
        for (const minutes of [0, 1, 59, 480, 481, 1000, 5000]) {
          const due = addWorkingMinutes(start, minutes, officeNewYork);
          expect(workingMinutesBetween(start, due, officeNewYork), `${start.toISOString()} + ${minutes}`).to.equal(minutes);
        }
      }
    });

    it('agrees with addWorkingMinutes the other way: adding the minutes between reaches a working-hours end', () => {
      const from = utc('2026-03-05T18:00'); // Thu 13:00 EST
      const to = utc('2026-03-10T15:45'); // Tue 11:45 EDT
      const minutes = workingMinutesBetween(from, to, officeNewYork);
      expect(minutes).to.equal(4 * 60 + 8 * 60 + 8 * 60 + 2 * 60 + 45); // Thu 13:00–17:00, Fri, Mon, Tue 09:00–11:45
      expect(addWorkingMinutes(from, minutes, officeNewYork)).to.deep.equal(to);
    });
  });

  describe('formatDuration', () => {
    it('shows zero as "0m"', () => {
      expect(formatDuration(0)).to.equal('0m');
    });

    it('truncates sub-minute parts toward zero', () => {
      expect(formatDuration(59_999)).to.equal('0m');
      expect(formatDuration(45 * MIN + 59_000)).to.equal('45m');
      expect(formatDuration(-30_000)).to.equal('0m');
    });

    it('shows minutes alone under an hour: "45m"', () => {
      expect(formatDuration(45 * MIN)).to.equal('45m');
    });

    it('shows hours and minutes under a day: "3h 20m"', () => {
      expect(formatDuration(3 * HOUR + 20 * MIN)).to.equal('3h 20m');
    });

    it('leaves out zero units: "3h", "2d"', () => {
      expect(formatDuration(3 * HOUR)).to.equal('3h');
      expect(formatDuration(48 * HOUR + 59 * MIN)).to.equal('2d');
    });

    it('drops minutes once days are shown: "2d 4h"', () => {
      expect(formatDuration(2 * 24 * HOUR + 4 * HOUR + 37 * MIN)).to.equal('2d 4h');
    });

    it('prefixes negative durations with "-": "-1h 5m"', () => {
      expect(formatDuration(-(HOUR + 5 * MIN))).to.equal('-1h 5m');
      expect(formatDuration(-(HOUR + 5 * MIN + 40_000))).to.equal('-1h 5m');
    });
  });

  describe('workingHoursProblems', () => {
    it('accepts a sensible policy', () => {
      expect(workingHoursProblems(officeNewYork)).to.deep.equal([]);
    });

    it('accepts "24:00" as an end (work until midnight)', () => {
      expect(workingHoursProblems({ ...officeUtc, workingHoursEnd: '24:00' })).to.deep.equal([]);
    });

    it('refuses times that are not HH:MM', () => {
      for (const bad of ['9:00', '25:00', '12:60', '24:00', 'noon', '']) {
        expect(workingHoursProblems({ ...officeUtc, workingHoursStart: bad }), bad).to.have.length(1);
      }
      expect(workingHoursProblems({ ...officeUtc, workingHoursEnd: '17:00:00' })).to.have.length(1);
    });

    it('refuses an end that is not after the start', () => {
      expect(workingHoursProblems({ ...officeUtc, workingHoursEnd: '09:00' })).to.have.length(1);
      expect(workingHoursProblems({ ...officeUtc, workingHoursStart: '18:00' })).to.have.length(1);
    });

    it('refuses an empty list of days, or days outside 0..6', () => {
      expect(workingHoursProblems({ ...officeUtc, workingDays: [] })).to.have.length(1);
      expect(workingHoursProblems({ ...officeUtc, workingDays: [1, 7] })).to.have.length(1);
      expect(workingHoursProblems({ ...officeUtc, workingDays: [-1] })).to.have.length(1);
      expect(workingHoursProblems({ ...officeUtc, workingDays: [1.5] })).to.have.length(1);
    });

    it('refuses a time zone Intl does not know', () => {
      const problems = workingHoursProblems({ ...officeUtc, timezone: 'Mars/Olympus' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.contain('Mars/Olympus');
    });

    it('reports every problem at once', () => {
      const problems = workingHoursProblems({
        workingHoursStart: '17:00',
        workingHoursEnd: '09:00',
        workingDays: [],
        timezone: 'Nowhere/Else',
      });
      expect(problems).to.have.length(3);
    });

    it('makes addWorkingMinutes and workingMinutesBetween throw when the hours are unusable', () => {
      const broken = { ...officeUtc, workingDays: [] };
      expect(() => addWorkingMinutes(utc('2026-01-05T10:00'), 10, broken)).to.throw(Error, /working days/);
      expect(() => workingMinutesBetween(utc('2026-01-05T10:00'), utc('2026-01-06T10:00'), broken)).to.throw(Error);
    });
  });
});

import { expect } from 'chai';
import { quarterDays, quarterOf } from '../../src/domain/quarters.js';

describe('quarters', () => {
  it('names the quarter of a moment by its UTC date', () => {
    expect(quarterOf(new Date('2026-01-01T00:00:00Z'))).to.deep.equal({ quarter: 'Q1', year: 2026 });
    expect(quarterOf(new Date('2026-03-31T23:59:59.999Z'))).to.deep.equal({ quarter: 'Q1', year: 2026 });
    expect(quarterOf(new Date('2026-04-01T00:00:00Z'))).to.deep.equal({ quarter: 'Q2', year: 2026 });
    expect(quarterOf(new Date('2026-09-30T12:00:00Z'))).to.deep.equal({ quarter: 'Q3', year: 2026 });
    // 23:30 in New York on 31 December is already next year in UTC.
    expect(quarterOf(new Date('2026-12-31T23:30:00-05:00'))).to.deep.equal({ quarter: 'Q1', year: 2027 });
  });

  it('gives the first and last day of each quarter, both inclusive', () => {
    expect(quarterDays({ quarter: 'Q1', year: 2028 })).to.deep.equal({ from: '2028-01-01', to: '2028-03-31' });
    expect(quarterDays({ quarter: 'Q2', year: 2026 })).to.deep.equal({ from: '2026-04-01', to: '2026-06-30' });
    expect(quarterDays({ quarter: 'Q3', year: 2026 })).to.deep.equal({ from: '2026-07-01', to: '2026-09-30' });
    expect(quarterDays({ quarter: 'Q4', year: 9999 })).to.deep.equal({ from: '9999-10-01', to: '9999-12-31' });
    expect(quarterDays({ quarter: 'Q1', year: 1000 })).to.deep.equal({ from: '1000-01-01', to: '1000-03-31' });
  });
});

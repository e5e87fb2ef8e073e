import { expect } from 'chai';
import pg from 'pg';
import { escapeLiteral, withLiterals } from '../../src/infra/simple-query.js';

describe('withLiterals: a parameterised query as one SQL text', () => {
  it('writes each value in as a PostgreSQL literal, escaping quotes and backslashes', () => {
    const sql = withLiterals({ text: 'select $1, $2, $3, $4, $5::text[], $6::int[], $7', values: ["O'Brien", 'a\\b', null, 42, ['x', "y'z"], [], true] });
    expect(sql).to.equal(`select 'O''Brien',  E'a\\\\b', NULL, 42, ARRAY['x','y''z']::text[], ARRAY[]::int[], true`);
  });

  it('reads $10 as the tenth value, and leaves replacement patterns in the data alone', () => {
    const values = Array.from({ length: 10 }, (_v, i) => `v${i + 1}`);
    values[9] = "$& $' $1";
    expect(withLiterals({ text: 'select $1, $10', values })).to.equal(`select 'v1', '$& $'' $1'`);
  });

  it('refuses what it cannot write safely: a missing value, NaN, an object', () => {
    expect(() => withLiterals({ text: 'select $2', values: ['only one'] })).to.throw(/no value for \$2/);
    expect(() => withLiterals({ text: 'select $1', values: [Number.NaN] })).to.throw(/literal/);
    expect(() => withLiterals({ text: 'select $1', values: [{ a: 1 }] })).to.throw(/literal/);
  });
});

describe('escapeLiteral', () => {
  it("writes every string exactly as pg's escapeLiteral does", () => {
    const strings = ['', "'", "''", '\\', "\\'", 'plain', "O'Brien", 'a\\b\\\\c', "$& $' $1", '\ud800 lone', 'nul \u0000 byte', 'E\'x\'', '{"a":"b\\"c","d":"\\\\"}', 'émoji 🎉'];
    for (let i = 0; i < 200; i++) strings.push(Array.from({ length: i % 17 }, (_v, j) => "ab'\\\"\n"[(i * 7 + j * 3) % 7]).join(''));
    for (const text of strings) expect(escapeLiteral(text), JSON.stringify(text)).to.equal(pg.escapeLiteral(text));
  });
});

import { expect } from 'chai';
import { compileSafePattern, PATTERN_MAX_LENGTH } from '../../src/domain/safe-pattern.js';
import { Random } from '../support/random.js';

const compiled = (pattern: string) => {
  const result = compileSafePattern(pattern);
  if (!result.ok) throw new Error(`${pattern} refused: ${result.problem}`);
  return result;
};

describe('safe patterns (custom field validation)', () => {
  const PATTERNS = [
    '^[A-Z]{2}-\\d{4}$', 'abc', '^a|b$', 'a.c', '^$', '', '^\\w+@\\w+\\.com$', '\\bcat\\b', '\\Bat', '^(?:ab|cd)+$', '^(a|b)*c?$',
    '[^a-c]', '[a\\-z]', '[\\d-x]', '^\\s*$', '^\\S+$', 'x{2,}', 'x{1,3}y', '^\\x41\\u0042$', '^[]$', '[^]', '\\.', 'a{', '}', ']',
    '^(?<year>\\d{4})-(?<m>\\d{2})$', '^\\+?[0-9 ()-]{7,20}$', '^[A-Z][a-z]*( [A-Z][a-z]*)*$', '(ab)?c', '^\\t\\n$', '(?:)', 'a|', '[.]', '^\\cJ$',
  ];
  const ALPHABET = ['a', 'b', 'c', 'x', 'y', 'A', 'B', 'Z', '1', '9', '0', ' ', '\t', '\n', '-', '+', '@', '.', '_', 'é', '\u2028', '(', ')', '\u0000'];

  it('answers what JavaScript RegExp.test answers, on many patterns and texts', () => {
    const r = new Random(29);
    for (const pattern of PATTERNS) {
      const safe = compiled(pattern);
      const native = new RegExp(pattern);
      const texts = ['', 'abc', 'AB-1234', 'cat', 'a cat b', 'joe@site.com', '+1 (555) 123-4567', 'Hello World', '2026-11', 'xx', 'xxxy', 'AB', '\t\n', '\n'];
      for (let i = 0; i < 300; i++) texts.push(Array.from({ length: r.between(0, 12) }, () => r.pick(ALPHABET)).join(''));
      for (const text of texts) expect(safe.test(text), `${pattern} on ${JSON.stringify(text)}`).to.equal(native.test(text));
    }
  });

  it('answers pathological patterns on long texts (no catastrophic backtracking: a backtracking engine would not finish)', () => {
    const attack = 'a'.repeat(10_000) + '!';
    for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(a|aa)*b$', '^\\w*\\w*\\w*\\w*\\w*x$', '(.*a){20}$', '^([a-z]+)*[0-9]$']) {
      expect(compiled(pattern).test(attack), pattern).to.equal(false);
      expect(compiled(pattern).test(attack.slice(0, -1) + (pattern.endsWith('x$') ? 'x' : pattern.endsWith('[0-9]$') ? '7' : pattern.endsWith('b$') ? 'b' : 'a')), pattern).to.equal(true);
    }
  });

  it('refuses back-references, lookaround, oversized repetitions and overlong or invalid patterns, saying why', () => {
    const refused = (pattern: string) => {
      const result = compileSafePattern(pattern);
      expect(result.ok, pattern).to.equal(false);
      return result.ok ? '' : result.problem;
    };
    expect(refused('(a)\\1')).to.match(/back-reference/);
    expect(refused('(?<n>a)\\k<n>')).to.match(/back-reference/);
    expect(refused('a(?=b)')).to.match(/lookahead/);
    expect(refused('(?<!a)b')).to.match(/lookahead and lookbehind/);
    expect(refused('a{1000}')).to.match(/up to 100/);
    expect(refused('((a{100}){100}){100}')).to.match(/too complex/);
    expect(refused('x'.repeat(PATTERN_MAX_LENGTH + 1))).to.match(/at most 200/);
    expect(refused('(')).to.match(/not a valid regular expression/);
    expect(refused('[z-a]')).to.match(/not a valid/);
    expect(refused('\\u{41}')).to.match(/u flag/);
  });
});

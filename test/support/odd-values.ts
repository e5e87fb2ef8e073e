import type { Random } from './random.js';

/**
 * Odd but valid values for record fields: what a careless or foreign client sends and
 * the service must store, and read back, exactly (unicode of every plane, quotes, SQL
 * and LIKE characters, control characters other than NUL, padding the server trims).
 */
export const ODD_TEXTS = [
  'Zoë Ærøskøbing',
  '李小龍',
  'مرحبا بالعالم',
  'Ünïcødé 🚀✨',
  'e\u0301te\u0301 (combining)',
  'zero\u200bwidth',
  `O'Brien "Quoted"`,
  'back\\slash \\n not a newline',
  "'; drop table contacts; --",
  '100% _like_ %',
  'line one\nline two',
  'tab\there',
  '  padded  ',
  '👩‍👩‍👧‍👦 family',
  '𝕏 𝔪𝔞𝔱𝔥',
  'ſ ß ﬁ Ⅻ',
  '\u202eright-to-left override',
  '{"looks": "like json"}',
  '<b>html</b> &amp;',
];

/** At most `max` UTF-16 units, never cutting a surrogate pair in half (a lone surrogate is not valid text). */
export function clip(text: string, max: number): string {
  let out = '';
  for (const char of text) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}

export function oddText(r: Random, max = 100): string {
  if (r.chance(0.08)) {
    const unit = r.pick(ODD_TEXTS).trim();
    return clip(unit.repeat(Math.ceil(max / unit.length)), max).trim() || 'x';
  }
  return clip(r.pick(ODD_TEXTS), max);
}

/** Sometimes null, sometimes '' (stored as null), otherwise odd text. */
export function optionalOddText(r: Random, max = 100): string | null {
  return r.weighted([
    [1, null],
    [1, ''],
    [5, oddText(r, max)],
  ]);
}

export const longText = (r: Random, length: number) => {
  const parts: string[] = [];
  while (parts.join(' ').length < length) parts.push(r.pick(ODD_TEXTS).trim());
  return clip(parts.join(' '), length).trim();
};

const EMAILS = ['first.last+tag@example.co.uk', 'UPPER.Case@Example.COM', 'o-brien@sub.example.org', 'x@y.io', 'digits123@example.net'];
export const oddEmail = (r: Random, unique: string) => {
  const [local, domain] = r.pick(EMAILS).split('@');
  return `${local}.${unique}@${domain}`;
};
export const oddPhone = (r: Random) => r.pick(['+1 (555) 010-0001', '01.23.45.67.89', '+44 20 7946 0958', '555/0100', '+33 6 12 34 56 78']);
export const oddWebsite = (r: Random) => r.pick(['example.org', 'https://sub.example.com/path?q=1&r=ü', 'www.example.com/a/b', 'http://xn--bcher-kva.example']);

export function oddAddress(r: Random): Record<string, string> | null {
  return r.weighted<Record<string, string> | null>([
    [1, null],
    [1, {}],
    [1, { city: '' }],
    [3, { street: '1 Rue de l’Église', city: 'Zürich', state: 'ZH', zip: '8001', country: 'CH' }],
    [2, { city: oddText(r, 100), country: '日本' }],
  ]);
}

/** Any JSON object with string keys: nesting, arrays, numbers of every shape, empty keys and values. */
export function oddCustomFields(r: Random): Record<string, unknown> {
  const candidates: [string, unknown][] = [
    ['tier', r.pick(['gold', 'platine', 'silver'])],
    ['ключ', { deep: [1, 'two', null, true, { x: 1.5, y: [] }] }],
    ['a.b', 'dotted key'],
    ['', 'empty key'],
    ['with space', ' spaced value '],
    ['empty', {}],
    ['list', []],
    ['numbers', [0, -1.25, 1e21, 0.1 + 0.2, 12345678901234, -0]],
    ['flag', r.chance(0.5)],
    ['nothing', null],
    ['emoji 🚀', '🚀'],
    ['nested', { level1: { level2: { level3: { level4: { level5: 'deep' } } } } }],
    ['quote"key', `it's "quoted"`],
    ['date', '2026-01-05T09:00:00.000Z'],
  ];
  return Object.fromEntries(r.some(candidates, 0, 6));
}

/** Money with up to two decimals (accounts refuse more). */
export const oddMoney = (r: Random) => r.pick([0, 0.01, 1234.5, 99999999.99, 42, 7.1]);

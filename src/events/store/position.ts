import type { Position } from './types.js';

export const START: Position = { commit: 0n, prepare: 0n };

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export function isAtOrAfter(a: Position | null, b: Position): boolean {
  return a !== null && comparePositions(a, b) >= 0;
}

/** Text form for logs, checkpoints over HTTP and the like: `commit/prepare`. */
export function formatPosition(p: Position | null): string {
  return p ? `${p.commit}/${p.prepare}` : '-';
}

/** Both parts fit the stores' unsigned 64-bit fields (and the PostgreSQL store's signed sequence). */
const MAX_COMMIT = 2n ** 64n - 1n;
const MAX_PREPARE = 2n ** 63n - 1n;

/** The inverse of `formatPosition`; throws on anything else (callers over HTTP answer 400). */
export function parsePosition(text: string): Position {
  const m = /^(\d{1,20})\/(\d{1,20})$/.exec(text);
  if (!m) throw new Error(`not a position: ${text}`);
  const position = { commit: BigInt(m[1]), prepare: BigInt(m[2]) };
  if (position.commit > MAX_COMMIT || position.prepare > MAX_PREPARE) throw new Error(`not a position: ${text}`);
  return position;
}

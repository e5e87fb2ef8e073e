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

export function parsePosition(text: string): Position {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) throw new Error(`not a position: ${text}`);
  return { commit: BigInt(m[1]), prepare: BigInt(m[2]) };
}

/** `%term%` for ILIKE, with the caller's `%`, `_` and `\` taken literally. */
export function containsPattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

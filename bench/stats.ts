/** Nearest-rank percentile (p in 0..100) of values already sorted ascending; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export interface Distribution {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function distribution(values: readonly number[]): Distribution {
  // A typed array sorts numerically (and fast), unlike Array#sort's default string order.
  const sorted = Array.from(Float64Array.from(values).sort());
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
  };
}

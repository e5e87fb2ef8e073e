import { comparePositions } from '../events/store/position.js';
import type { Position } from '../events/store/types.js';

interface TenantRecord {
  /** The last event seen in the log that changes what is remembered for the tenant. */
  changedAt: Position | null;
  values: Map<string, { asOf: Position; value: unknown }>;
}

const before = (a: Position, b: Position) => comparePositions(a, b) < 0;

/**
 * What a saga reads per tenant that only a few event types change (the tenant's workflow
 * definitions, its webhook subscriptions), remembered between the tenant's events so most
 * events need neither the read nor the wait for its projection.
 *
 * A value read for the event at `asOf` (its projection as of every event before it) holds
 * for a later event E as long as no watched event of the tenant lies in [asOf, E). The runner
 * tells the memo of every watched event as it takes it from the log, in log order, before it
 * hands any later event to the saga (`changed`); so when E is handled, every watched event
 * before E has been told, and a value is used only if the last one told is before its
 * `asOf`. Events after E may have been told too (the runner reads ahead): that only makes the
 * memo read again sooner. One memo lives as long as one run of the runner: a new run (after
 * a restart or a lost lease) starts empty, since it did not see what happened in between.
 */
export class TenantMemo {
  private tenants = new Map<string, TenantRecord>();
  /** Bumped when everything is forgotten: a read begun before then keeps its answer to itself. */
  private generation = 0;

  constructor(private readonly maxTenants = 10_000) {}

  /** A watched event of the tenant at `position`, in log order. */
  changed(tenantId: string, position: Position): void {
    this.record(tenantId).changedAt = position;
  }

  /** `load`'s answer as of the event at `at`, remembered or read again. */
  async read<T>(tenantId: string, key: string, at: Position, load: () => Promise<T>): Promise<T> {
    const record = this.tenants.get(tenantId);
    const known = record?.values.get(key);
    if (known && !before(at, known.asOf) && (!record!.changedAt || before(record!.changedAt, known.asOf))) return known.value as T;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) {
      const now = this.record(tenantId);
      const stored = now.values.get(key);
      // Kept only while nothing changed since `at`, and when newer than what is there.
      if ((!now.changedAt || before(now.changedAt, at)) && (!stored || before(stored.asOf, at))) now.values.set(key, { asOf: at, value });
    }
    return value;
  }

  private record(tenantId: string): TenantRecord {
    let record = this.tenants.get(tenantId);
    if (!record) {
      if (this.tenants.size >= this.maxTenants) {
        // Forgetting one tenant would forget its changes too: forget every tenant at once.
        this.tenants = new Map();
        this.generation++;
      }
      record = { changedAt: null, values: new Map() };
      this.tenants.set(tenantId, record);
    }
    return record;
  }
}

/** One append waiting for a group, and what its caller waits on. */
export interface GroupMember<Req, Res> {
  readonly streamId: string;
  readonly request: Req;
  /** How much it adds to a group (its number of events). */
  readonly size: number;
  resolve(result: Res): void;
  reject(error: unknown): void;
}

export type Settled<Res> = { ok: true; value: Res } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** Groups committing at once; appends arriving meanwhile wait for the next group. */
  maxInFlight: number;
  /** A group stops growing at this many events (a larger append still goes, alone). */
  maxGroupSize: number;
}

/**
 * Group commit: appends that arrive while every commit slot is busy (or in the same turn
 * of the event loop) are handed to `commit` together, to share one transaction.
 *
 * A group holds at most one append per stream, and an append waits while an earlier one
 * to its stream is in flight: appends to one stream commit one after another, in the
 * order they were made, each checked against what the previous one wrote.
 *
 * `commit` settles each member on its own (one member's error is its error alone) and
 * must answer one `Settled` per member, in order.
 */
export class GroupCommitter<Req, Res> {
  private queue: GroupMember<Req, Res>[] = [];
  /** Streams of the groups in flight. */
  private readonly busy = new Set<string>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: (group: readonly GroupMember<Req, Res>[]) => Promise<Settled<Res>[]>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(streamId: string, request: Req, size: number): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ streamId, request, size, resolve, reject });
      this.schedule();
    });
  }

  /** Waits one turn of the event loop, so that appends made in the same turn share a group. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxInFlight) {
      const free = this.options.maxInFlight - this.inFlight;
      const group = this.take(process.env.GC_SPLIT ? Math.ceil(this.queue.length / free) : Infinity);
      if (group.length === 0) return;
      this.inFlight++;
      for (const member of group) this.busy.add(member.streamId);
      void this.run(group).finally(() => {
        this.inFlight--;
        for (const member of group) this.busy.delete(member.streamId);
        this.schedule();
      });
    }
  }

  /**
   * The next group, in arrival order, skipping appends to streams in flight or already in
   * it (a skipped stream's later appends are skipped too, so each stream keeps its order).
   */
  private take(maxMembers: number): GroupMember<Req, Res>[] {
    const group: GroupMember<Req, Res>[] = [];
    const rest: GroupMember<Req, Res>[] = [];
    const streams = new Set<string>();
    let size = 0;
    for (const member of this.queue) {
      const fits = group.length === 0 || (size + member.size <= this.options.maxGroupSize && group.length < maxMembers);
      if (fits && !this.busy.has(member.streamId) && !streams.has(member.streamId)) {
        group.push(member);
        streams.add(member.streamId);
        size += member.size;
      } else {
        rest.push(member);
        // Whatever comes after an append left out for its stream must not overtake it.
        streams.add(member.streamId);
      }
    }
    this.queue = rest;
    return group;
  }

  private async run(group: GroupMember<Req, Res>[]): Promise<void> {
    let settled: Settled<Res>[];
    try {
      const t0 = performance.now();
      settled = await this.commit(group);
      if (process.env.GC_DEBUG) { DBG.groups++; DBG.members += group.length; DBG.ms += performance.now() - t0; DBG.inflight += this.inFlight; DBG.queued += this.queue.length;
        if (performance.now() - DBG.at > 2000) { console.error(JSON.stringify({ groups: DBG.groups, avgSize: (DBG.members / DBG.groups).toFixed(2), avgMs: (DBG.ms / DBG.groups).toFixed(2), inflight: (DBG.inflight/DBG.groups).toFixed(2), queued: (DBG.queued/DBG.groups).toFixed(2) })); Object.assign(DBG, { groups: 0, members: 0, ms: 0, inflight: 0, queued: 0, at: performance.now() }); } }
    } catch (error) {
      settled = group.map(() => ({ ok: false, error }));
    }
    group.forEach((member, i) => {
      const outcome = settled[i] ?? { ok: false, error: new Error('group commit gave no answer for this append') };
      if (outcome.ok) member.resolve(outcome.value);
      else member.reject(outcome.error);
    });
  }
}

export async function settle<Res>(work: Promise<Res>): Promise<Settled<Res>> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    return { ok: false, error };
  }
}

const DBG = { groups: 0, members: 0, ms: 0, inflight: 0, queued: 0, at: 0 };

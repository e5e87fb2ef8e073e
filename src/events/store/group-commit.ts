/** One append waiting for a group. */
export interface GroupMember<Req> {
  readonly streamId: string;
  readonly request: Req;
  /** How much it adds to a group (its number of events). */
  readonly size: number;
}

interface Waiting<Req, Res> extends GroupMember<Req> {
  resolve(result: Res): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Groups committing at once; appends arriving meanwhile wait for the next group. */
  maxInFlight: number;
  /** A group stops growing at this many events (a larger append still goes, alone). */
  maxGroupSize: number;
}

/**
 * Commits a group in one transaction. Resolves when that transaction is over, with each
 * member's own answer: a member the transaction could not take (its stream busy, an
 * error of the whole group) may still be on its way, appended alone, without holding up
 * the others' answers.
 */
export type CommitGroup<Req, Res> = (group: readonly GroupMember<Req>[]) => Promise<Promise<Res>[]>;

/**
 * Group commit: appends that arrive while every commit slot is busy (or in the same turn
 * of the event loop) are handed to `commit` together, to share one transaction.
 *
 * A group holds at most one append per stream, and an append waits while an earlier one
 * to its stream is unanswered: appends to one stream commit one after another, in the
 * order they were made, each checked against what the previous one wrote.
 */
export class GroupCommitter<Req, Res> {
  private queue: Waiting<Req, Res>[] = [];
  /** Streams with an append taken into a group and not answered yet. */
  private readonly busy = new Set<string>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: CommitGroup<Req, Res>,
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
      const group = this.take();
      if (group.length === 0) return;
      this.inFlight++;
      for (const member of group) this.busy.add(member.streamId);
      void this.run(group);
    }
  }

  /**
   * The next group, in arrival order, skipping appends to busy streams or to streams
   * already in it (a skipped stream's later appends are skipped too, so each stream
   * keeps its order).
   */
  private take(): Waiting<Req, Res>[] {
    const group: Waiting<Req, Res>[] = [];
    const rest: Waiting<Req, Res>[] = [];
    const streams = new Set<string>();
    let size = 0;
    for (const member of this.queue) {
      const fits = group.length === 0 || size + member.size <= this.options.maxGroupSize;
      if (fits && !this.busy.has(member.streamId) && !streams.has(member.streamId)) {
        group.push(member);
        size += member.size;
      } else {
        rest.push(member);
      }
      streams.add(member.streamId);
    }
    this.queue = rest;
    return group;
  }

  private async run(group: Waiting<Req, Res>[]): Promise<void> {
    let answers: Promise<Res>[];
    try {
      answers = await this.commit(group);
    } catch (error) {
      answers = group.map(() => Promise.reject(error));
    }
    this.inFlight--;
    group.forEach((member, i) => {
      const answer = answers[i] ?? Promise.reject(new Error('group commit gave no answer for this append'));
      answer.then(member.resolve, member.reject).finally(() => {
        this.busy.delete(member.streamId);
        this.schedule();
      });
    });
    this.schedule();
  }
}

/** The run-log service the API uses: reads, status, links and the live stream, each for a principal. */
import type { Principal } from "../../auth/index.js";
import { LimitReachedError } from "../../domain/index.js";
import type { Clock, EventBus } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { followLog, type FollowArgs } from "./follow.js";
import { LogReads, type LogStatusView } from "./reads.js";
import type { LogSettings } from "./settings.js";
import type { LogBlobs, LogChunk } from "./types.js";

export interface RunLogsDeps {
  mongo: Mongo;
  bus: EventBus;
  blobs: LogBlobs | null;
  settings: LogSettings;
  clock: Clock;
  /** The live stream's store read without news (tests shrink it). @default 3 s */
  pollMs?: number;
}

/**
 * `runLogs` subscriptions one user may have open at once on one API instance. Each costs a bus
 * subscription, a store read or two a second while it waits, and up to a log's worth of held
 * chunks for a slow reader: without a bound, one user's open sockets would flood MongoDB and memory.
 */
export const MAX_LOG_FOLLOWERS_PER_USER = 20;

export class RunLogs {
  readonly reads: LogReads;
  /** Open runLogs subscriptions by user id (this process). */
  private readonly followers = new Map<string, number>();

  constructor(private readonly deps: RunLogsDeps) {
    this.reads = new LogReads(deps);
  }

  /** `run { logs(offset, limit, token) }`. */
  read(p: Principal, runId: string, args: { offset?: number | null; limit?: number | null; token?: number | null }): Promise<LogChunk[]> {
    return this.reads.read(p, runId, args);
  }

  /** `run { logStatus(token) }`: null when the run has no log (yet). */
  async status(p: Principal, runId: string, token: number | null): Promise<LogStatusView | null> {
    const seg = await this.reads.segment(p, runId, token);
    return seg ? this.reads.status(seg) : null;
  }

  /** Every log of the run (one per claim), oldest first. */
  async statuses(p: Principal, runId: string): Promise<LogStatusView[]> {
    return (await this.reads.segments(p, runId)).map((s) => this.reads.status(s));
  }

  /** `run { logUrl(token) }`. */
  async url(p: Principal, runId: string, token: number | null): Promise<string | null> {
    const seg = await this.reads.segment(p, runId, token);
    return seg ? this.reads.url(seg) : null;
  }

  /** `subscription runLogs`: refused (NOT_FOUND, BAD_USER_INPUT) before any chunk flows. */
  async follow(p: Principal, runId: string, args: FollowArgs): Promise<AsyncIterableIterator<LogChunk>> {
    const { mongo, bus, clock, pollMs } = this.deps;
    const open = this.followers.get(p.userId) ?? 0;
    if (open >= MAX_LOG_FOLLOWERS_PER_USER) {
      throw new LimitReachedError(`you have ${open} runLogs subscriptions open, the most allowed at once: close one first`);
    }
    this.followers.set(p.userId, open + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (this.followers.get(p.userId) ?? 1) - 1;
      if (n > 0) this.followers.set(p.userId, n);
      else this.followers.delete(p.userId);
    };
    let inner: AsyncIterableIterator<LogChunk>;
    try {
      inner = await followLog({ mongo, bus, clock, reads: this.reads, ...(pollMs ? { pollMs } : {}) }, p, runId, args);
    } catch (e) {
      release();
      throw e;
    }
    const wrapped: AsyncIterableIterator<LogChunk> = {
      next: async () => {
        try {
          const r = await inner.next();
          if (r.done) release();
          return r;
        } catch (e) {
          release();
          throw e;
        }
      },
      return: async () => {
        release();
        return inner.return ? inner.return() : { value: undefined, done: true };
      },
      throw: async (e?: unknown) => {
        release();
        if (inner.throw) return inner.throw(e);
        throw e;
      },
      [Symbol.asyncIterator]: () => wrapped,
    };
    return wrapped;
  }
}

/** The run-log service the API uses: reads, status, links and the live stream, each for a principal. */
import type { Principal } from "../../auth/index.js";
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

export class RunLogs {
  readonly reads: LogReads;

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
  follow(p: Principal, runId: string, args: FollowArgs): Promise<AsyncIterableIterator<LogChunk>> {
    const { mongo, bus, clock, pollMs } = this.deps;
    return followLog({ mongo, bus, clock, reads: this.reads, ...(pollMs ? { pollMs } : {}) }, p, runId, args);
  }
}

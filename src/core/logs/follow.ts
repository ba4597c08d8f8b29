/**
 * Following a run's log (`subscription runLogs`): the chunks from an offset, then each new one as
 * it is stored, through every later attempt of the run, until the run has ended and its last log
 * is read to its end.
 *
 * One cursor (claim token, byte offset) moves only forward, and every chunk given is the one at the
 * cursor: replay and live output cannot leave a gap or repeat a byte at the switch. Chunks from the
 * run's bus channel are used directly when they continue the cursor; anything else (a gap: a
 * message lost, or stored before the subscription began) is read from the store at the cursor. The
 * bus is only a fast path: a store read every `pollMs` without news keeps a lost message from
 * stalling the stream.
 */
import type { Principal } from "../../auth/index.js";
import { isTerminal, LogState, ValidationError, type LogSegmentDoc } from "../../domain/index.js";
import { Channels, type Clock, type EventBus } from "../../shared-state/index.js";
import { findLogSegment, findRun, findRunLogSegments, type Mongo } from "../../store/index.js";
import { fromByte, type LogReads } from "./reads.js";
import type { LogChunk, LogNotice } from "./types.js";
import { claimHolds } from "./writer.js";

export interface FollowDeps {
  mongo: Mongo;
  bus: EventBus;
  reads: LogReads;
  clock: Clock;
  /** Store read when nothing came on the bus for this long. @default 3 s */
  pollMs?: number;
  /** A log whose claim no longer holds the run and silent this long is complete. @default 5 s */
  graceMs?: number;
}

/** Chunks read from the store per round. */
const READ_BATCH = 200;
/** Chunks from the bus held for a slow subscriber at most; past it they are read from the store later. */
const MAX_HELD = 1_000;

export interface FollowArgs {
  /** The claim whose log to start with (default: the run's latest log, or its first one to come). */
  token: number | null;
  /** Byte offset in that log. @default 0 */
  fromOffset: number;
}

/** Checks access and the arguments, then returns the stream (errors are thrown before any chunk). */
export async function followLog(deps: FollowDeps, p: Principal, runId: string, args: FollowArgs): Promise<AsyncIterableIterator<LogChunk>> {
  if (!Number.isInteger(args.fromOffset) || args.fromOffset < 0) {
    throw new ValidationError("fromOffset", `must be a byte offset, an integer >= 0; got ${args.fromOffset}`);
  }
  const first = args.token === null ? null : await deps.reads.segment(p, runId, args.token);
  if (args.token === null) await deps.reads.run(p, runId);
  return new LogFollower(deps, runId, first, args.fromOffset).start();
}

class LogFollower {
  private held: LogNotice[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  private unsubscribe: Promise<() => Promise<void>> | null = null;
  private readonly pollMs: number;
  private readonly graceMs: number;

  constructor(
    private readonly deps: FollowDeps,
    private readonly runId: string,
    private seg: LogSegmentDoc | null,
    private offset: number,
  ) {
    this.pollMs = deps.pollMs ?? 3_000;
    this.graceMs = deps.graceMs ?? 5_000;
  }

  start(): AsyncIterableIterator<LogChunk> {
    // Subscribed before the first read, so nothing stored after that read can be missed.
    this.unsubscribe = this.deps.bus.subscribe(Channels.runLogs(this.runId), (msg) => this.onNotice(msg));
    const gen = this.chunks();
    const close = async () => {
      this.closed = true;
      this.wake?.();
      const u = this.unsubscribe;
      this.unsubscribe = null;
      if (u) await (await u)();
    };
    return {
      next: () => gen.next(),
      return: async () => {
        await close();
        await gen.return(undefined);
        return { value: undefined, done: true };
      },
      throw: async (e?: unknown) => {
        await close();
        await gen.return(undefined);
        throw e;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  private onNotice(msg: string): void {
    try {
      this.held.push(JSON.parse(msg) as LogNotice);
      if (this.held.length > MAX_HELD) this.held.shift();
    } catch {
      return;
    }
    this.wake?.();
  }

  private async *chunks(): AsyncGenerator<LogChunk, void, undefined> {
    try {
      await this.unsubscribe;
      while (!this.closed) {
        if (!this.seg) {
          const next = await this.nextSegment(null);
          if (next === "over") return;
          if (next === null) {
            await this.sleep();
            continue;
          }
          this.seg = next;
        }
        const seg = this.seg;
        // The bus's chunks that continue the cursor, else the store's.
        let got = this.fromBus(seg.token);
        // A log that is no longer live has nothing past its recorded size (it counts stored chunks only).
        const more = seg.state === LogState.LIVE || this.offset < seg.bytes;
        if (got.length === 0 && more) got = (await this.deps.reads.readSegment(seg, this.offset, READ_BATCH)).filter((c) => c.offset + c.size > this.offset).map((c) => fromByte(c, this.offset));
        for (const c of got) {
          if (this.closed) return;
          this.offset = c.offset + c.size;
          yield c;
        }
        if (got.length > 0) continue;
        // Nothing at the cursor: is this log complete? then the next one, or the end.
        const now = await findLogSegment(this.deps.mongo, seg._id);
        if (now) this.seg = now;
        if (!(await this.complete(this.seg))) {
          await this.sleep();
          continue;
        }
        const next = await this.nextSegment(this.seg.token);
        if (next === "over") return;
        if (next === null) {
          await this.sleep();
          continue;
        }
        this.seg = next;
        this.offset = 0;
      }
    } finally {
      this.closed = true;
    }
  }

  /** Chunks held from the bus for `token` that continue the cursor (older ones dropped; a gap stops it). */
  private fromBus(token: number): LogChunk[] {
    const out: LogChunk[] = [];
    let at = this.offset;
    while (this.held.length > 0) {
      const n = this.held[0]!;
      if (n.token !== token) {
        // Another claim's output: a later one waits until this log is complete; an older one is done.
        if (n.token > token) break;
        this.held.shift();
        continue;
      }
      const first = n.chunks[0];
      if (first && first.offset > at) break; // a gap: the store fills it
      this.held.shift();
      for (const c of n.chunks) {
        if (c.offset + c.size <= at) continue;
        const chunk = fromByte({ runId: n.runId, attempt: n.attempt, token: n.token, ...c }, at);
        out.push(chunk);
        at = chunk.offset + chunk.size;
      }
    }
    return out;
  }

  /** Whether the log has everything it will get, and the cursor is at its end. */
  private async complete(seg: LogSegmentDoc): Promise<boolean> {
    if (this.offset < seg.bytes) return false;
    if (seg.ended || seg.state !== LogState.LIVE) return true;
    // Never ended: its attempt may have died. Complete once the claim no longer holds the run (or
    // the run ended) and nothing came for a while (a write checked just before may still land).
    const run = await findRun(this.deps.mongo, seg.runId);
    const over = !run || isTerminal(run.status) || !claimHolds(run, seg.token);
    return over && this.deps.clock() - seg.lastWriteAt.getTime() > this.graceMs;
  }

  /** The run's next log after `token` (null: the first); "over" when the run has ended and has none. */
  private async nextSegment(token: number | null): Promise<LogSegmentDoc | "over" | null> {
    const segs = await findRunLogSegments(this.deps.mongo, this.runId);
    const next = token === null ? segs[segs.length - 1] : segs.find((s) => s.token > token);
    if (next) return next;
    const run = await findRun(this.deps.mongo, this.runId);
    if (!run || isTerminal(run.status)) {
      // An executor stores an attempt's last output before its result: the run ended after the
      // log just read to its end was ended, so nothing follows it.
      if (token !== null && this.seg?.ended) return "over";
      // Otherwise (no log yet, or one its attempt never ended): a late write gets the grace.
      const ended = run?.finishedAt ? run.finishedAt.getTime() : 0;
      if (this.deps.clock() - ended > this.graceMs) return "over";
    }
    return null;
  }

  private sleep(): Promise<void> {
    if (this.closed || this.held.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}

/**
 * The pull loop: takes runs from the node's pools' ready queues only while it has a free slot
 * (back-pressure), and admits each run it took: started at once with its payload, claimed in
 * MongoDB first (owners with a concurrency limit, unreadable payloads), or handed back to the
 * queue when it does not fit the capacity left.
 */
import { coerceError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import { decodeRunPayload } from "../core/index.js";
import { resourcesOf } from "../core/index.js";
import type { RunService } from "../core/index.js";
import type { Clock, SharedState, TakenEntry } from "../shared-state/index.js";
import type { Wakeup } from "../support/index.js";
import type { JobSpec, RunDoc } from "../domain/index.js";
import type { Attempts } from "./attempts.js";
import type { Capacity } from "./capacity.js";
import type { NodeRegistry } from "./node-registry.js";
import type { ResolvedOptions } from "./options.js";
import type { ReportBackoff, ReportGate } from "./report.js";

export interface PullLoopDeps {
  o: Pick<ResolvedOptions, "pools" | "pollMs" | "leaseMs">;
  nodeId: string;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  capacity: Capacity;
  attempts: Attempts;
  gate: ReportGate;
  backoff: ReportBackoff;
  /** Cut short by new work, a freed slot, an attempt that left, a take that ended. */
  wakeup: Wakeup;
  /** The executor takes work (not draining or stopped). */
  taking: () => boolean;
  /** This node's lease: the epoch its claims are made under, and whether it may claim now. */
  lease: Pick<NodeRegistry, "epoch" | "fresh">;
  /**
   * The interpreters this node has: a take is given them, and gets the pool's plain runs and its
   * script runs of these interpreters only, in one set of owner turns for all (ReadyQueue.take).
   */
  interpreters?: readonly string[];
  /** Whether this node can start a run of the spec (a script whose interpreter it lacks: no, and it goes back). */
  canRun?: (spec: JobSpec) => boolean;
}

export class PullLoop {
  /** Takes in flight, and the slots they asked for. */
  private readonly pulls = new Set<Promise<void>>();
  private reserved = 0;
  /** The last take found no due run; the loop sleeps before the next. */
  private drained = false;
  /** The last take failed: one at a time, after a pause, until one succeeds. */
  private failing = false;
  /** The loop is waiting while takes are in flight (a take ending must wake it). */
  private awaitingPulls = false;
  private poolCursor = 0;
  /** Earliest staged entry over the pools, as the last take saw it: an idle loop sleeps until then. */
  private nextStagedAt: number | null = null;
  constructor(private readonly deps: PullLoopDeps) {}

  /**
   * Pulls while slots are free, until the executor stops taking work; resolves once the takes in
   * flight ended. Two takes may be in flight, each for slots no other take asked for: while one
   * waits for Redis, slots freed meanwhile are asked for by the next, so a burst of short runs
   * does not leave the executor idle for a round trip per batch.
   */
  async run(): Promise<void> {
    const { capacity, attempts, clock, wakeup } = this.deps;
    const pollMs = this.deps.o.pollMs;
    while (this.deps.taking()) {
      const free = capacity.free(clock(), attempts.size) - this.reserved;
      if (free <= 0 || this.pulls.size >= (this.failing ? 1 : PULLS_IN_FLIGHT) || (this.drained && this.pulls.size > 0)) {
        // Every slot busy: reports may wait for one to free; a full backlog must be written first.
        if (free <= 0 && capacity.backlogPressing(attempts.size)) this.deps.gate.release();
        // Woken by a freed slot, new work, or (while takes are in flight) a take ending.
        this.awaitingPulls = this.pulls.size > 0;
        await wakeup.sleep(pollMs);
        this.awaitingPulls = false;
        continue;
      }
      if (!this.deps.lease.fresh(clock())) {
        // No claim under a lease this node may have lost (see NodeRegistry.fresh): renewed or
        // replaced by the next heartbeat.
        await wakeup.sleep(pollMs);
        continue;
      }
      const pausedFor = this.deps.backoff.pausedUntil - clock();
      if (pausedFor > 0) {
        await wakeup.sleep(pausedFor);
        continue;
      }
      if (this.drained) {
        // The last take found nothing due: sleep until woken (new work, a freed slot) or the next staged entry is due.
        this.drained = false;
        await wakeup.sleep(this.idleSleepMs());
        continue;
      }
      this.startPull(free);
    }
    await Promise.all(this.pulls);
  }

  private startPull(free: number): void {
    this.reserved += free;
    let got = -1;
    const pull: Promise<void> = this.pullOnce(free)
      .then(
        (n) => {
          got = n;
          this.failing = false;
          this.deps.gate.dispatched(n === free);
          if (n === 0) this.drained = true;
        },
        async (e: unknown) => {
          this.failing = true;
          this.deps.log.error({ err: coerceError(e) }, "pull failed");
          await delay(Math.min(1_000, this.deps.o.pollMs));
        },
      )
      .finally(() => {
        this.reserved -= free;
        this.pulls.delete(pull);
        // An empty take wakes only a loop waiting for it: a pending wake-up would cut the idle
        // sleep that follows short, and the loop would poll an empty queue without pause.
        // Two takes ending in one turn wake it once (a second wake-up would be left pending).
        if (got !== 0 || this.awaitingPulls) {
          this.awaitingPulls = false;
          this.deps.wakeup.wake();
        }
      });
    this.pulls.add(pull);
  }

  /** Until the next staged entry is due (never longer than the safety poll). */
  private idleSleepMs(): number {
    const pollMs = this.deps.o.pollMs;
    if (this.nextStagedAt === null) return pollMs;
    return Math.min(pollMs, Math.max(1, this.nextStagedAt - this.deps.clock()));
  }

  /** Takes up to `free` runs across the pools (round robin) and starts them; returns how many started. */
  private async pullOnce(free: number): Promise<number> {
    let started = 0;
    let nextAt: number | null = null;
    const pools = this.deps.o.pools;
    for (let i = 0; i < pools.length && started < free; i++) {
      const pool = pools[(this.poolCursor + i) % pools.length]!;
      // One take per pool for all its queues (plain runs and the scripts this node can run): one
      // round trip, and one set of owner turns, whatever queues an owner spreads its runs over.
      const got = await this.takeFrom(pool, free - started);
      if (got.nextAt !== null) nextAt = nextAt === null ? got.nextAt : Math.min(nextAt, got.nextAt);
      started += got.started;
    }
    this.nextStagedAt = nextAt;
    this.poolCursor = (this.poolCursor + 1) % pools.length;
    return started;
  }

  /** Takes up to `max` runs from one pool's ready queues and admits them. */
  private async takeFrom(pool: string, max: number): Promise<{ started: number; nextAt: number | null }> {
    const { ready } = this.deps.state;
    // Both go in one write to Redis; owners are named only when some owner is limited (rare).
    // The claims' markers expire a lease after this instant: what is started later has less of it.
    const takenAt = this.deps.clock();
    const [got, anyLimited] = await Promise.all([ready.take(pool, max, takenAt, this.deps.o.leaseMs, this.deps.interpreters ?? []), ready.anyLimited()]);
    const { withPayload, inMongo } = sortTaken(got.taken, this.deps.log);
    // Owners given a concurrency limit after their runs were queued: their claims take a slot first.
    const limited = anyLimited && withPayload.length ? await ready.limitedAmong([...new Set(withPayload.map((t) => t.run.ownerId))]) : NO_OWNERS;
    return { started: await this.admit(withPayload, limited, inMongo, takenAt), nextAt: got.nextAt };
  }

  /**
   * Starts the taken runs that fit, hands back those that do not, and claims in MongoDB those that
   * must be (`inMongo`, plus those of `limited` owners); returns how many started.
   */
  private async admit(withPayload: readonly TakenRun[], limited: ReadonlySet<string>, inMongo: string[], takenAt: number): Promise<number> {
    const { capacity, attempts } = this.deps;
    let started = 0;
    const handBack: string[] = [];
    let late = 0;
    for (const { run, payload } of withPayload) {
      if (limited.has(run.ownerId)) inMongo.push(run._id);
      else if (!capacity.fits(resourcesOf(run.spec))) handBack.push(run._id);
      else if (this.deps.canRun && !this.deps.canRun(run.spec)) {
        // Only a run pushed to a queue not made for it gets here (a take gets the scripts of this node's interpreters only).
        this.deps.log.warn({ runId: run._id, interpreter: run.spec.script?.interpreter }, "took a run this node cannot start; handed back");
        handBack.push(run._id);
      }
      else if (attempts.startTaken(run, payload, takenAt)) started++;
      else {
        late++;
        handBack.push(run._id);
      }
    }
    if (late) this.deps.log.warn({ runs: late, takenAgoMs: this.deps.clock() - takenAt }, "took runs too late to start them within their claim (this node is overloaded); handed back");
    if (handBack.length) {
      // Back to the queue for a node with room (or for this one once a run ends). Runs claimed
      // in MongoDB first (below) are already RUNNING here and start regardless.
      capacity.markFull(this.deps.clock());
      for (const runId of handBack) await this.deps.runs.requeueTaken(runId);
    }
    // Runs that are not QUEUED any more (cancelled, or claimed through a replayed entry
    // elsewhere) are simply not among those won.
    if (inMongo.length) {
      for (const run of await this.deps.runs.claimMany(inMongo, this.deps.nodeId, this.deps.o.leaseMs, this.deps.lease.epoch)) {
        attempts.startClaimed(run);
        started++;
      }
    }
    return started;
  }
}

interface TakenRun {
  run: RunDoc;
  payload: string;
}

/**
 * Splits what a take brought: entries with a readable payload start from it; entries without one
 * (owners with a concurrency limit) or with one that cannot be read are claimed in MongoDB.
 */
export function sortTaken(taken: readonly TakenEntry[], log: Logger): { withPayload: TakenRun[]; inMongo: string[] } {
  const withPayload: TakenRun[] = [];
  const inMongo: string[] = [];
  for (const t of taken) {
    if (t.payload === null) {
      inMongo.push(t.runId);
      continue;
    }
    try {
      withPayload.push({ run: decodeRunPayload(t.payload), payload: t.payload });
    } catch (e) {
      log.warn({ err: coerceError(e), runId: t.runId }, "unreadable ready-queue payload; claiming the run in MongoDB");
      inMongo.push(t.runId);
    }
  }
  return { withPayload, inMongo };
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const NO_OWNERS: ReadonlySet<string> = new Set();
/** Takes from the ready queues in flight at once (see PullLoop.run). */
const PULLS_IN_FLIGHT = 2;

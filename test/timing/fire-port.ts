/**
 * An in-memory implementation of the fire port (src/scheduler/fire-port.ts), so the property tests
 * of firing drive the scheduler's own fire (src/scheduler/fire-job.ts, JobFirer) through its pure
 * decisions (timing/decide-fire.ts): a store that creates runs the way RunService.materialize does
 * (a run found under its fireKey is returned as is; otherwise the overlap decision table, against
 * the job's unfinished runs, may refuse it), an insert-once ledger, a job whose advance applies,
 * and a timer that is in flight until the fire completes it. A store can be told to die after its
 * n-th effect (the scheduler process dying there): the tests replay the fire as a new owner would.
 */
import type { JobDoc } from "../../src/domain/documents.js";
import { JobFirer } from "../../src/scheduler/fire-job.js";
import type { CreatedRun, FirePort, FiringJob } from "../../src/scheduler/fire-port.js";
import { silentLogger } from "../../src/support/log.js";
import { applyOverlap, decideOverlap, type FireJob, type FireOptions, type JobAdvance, type LedgerEntry, type OverlapDecision, type OverlapState, type RunRequest, type Schedule } from "../../src/timing/index.js";

/** The effects a fire has on the store, in the order it had them. */
export type Effect = "createRun" | "recordLedger" | "advanceJob" | "withdrawStaged" | "complete";

/** Thrown by a store told to die: the process ended right after an effect. */
export class Died extends Error {
  constructor(readonly after: Effect) {
    super(`died after ${after}`);
  }
}

export class ModelStore {
  /** fireKey → runId */
  readonly runs: Map<string, string>;
  /** The job's unfinished runs, as the overlap lock sees them. */
  overlap: OverlapState;
  /** The overlap decision of each run created, in order. */
  readonly decisions: OverlapDecision[] = [];
  /** Runs created with a future notBefore (staged), by fireKey → notBefore. */
  readonly staged = new Map<string, number>();
  /** The fire ledger, insert-once. */
  readonly ledger = new ModelLedger();
  /** The job as stored (a fire's advance applies to it). */
  job: FiringJob | null = null;
  /** A user changed the job meanwhile: the version-conditional advance matches nothing. */
  changed = false;
  /** The job's timer: in flight (claimed, not completed) or armed at `at` (null: not armed). */
  timer: { inFlight: boolean; at: number | null } = { inFlight: true, at: null };
  /** Every effect, in order. */
  readonly effects: Effect[] = [];
  /** Die right after this many effects (null: never). */
  dieAfter: number | null = null;

  constructor(overlap: OverlapState = { active: 0, pending: 0 }, existing: Iterable<string> = []) {
    this.overlap = overlap;
    this.runs = new Map([...existing].map((k, i) => [k, `existing-${i}`]));
  }

  effect(e: Effect): void {
    this.effects.push(e);
    if (this.dieAfter !== null && this.effects.length >= this.dieAfter) {
      this.dieAfter = null;
      throw new Died(e);
    }
  }

  /** RunService.materialize, modelled: replay → the run found; else the overlap table decides. */
  materialize(job: FireJob, req: RunRequest, now: number): CreatedRun {
    const found = this.runs.get(req.fireKey);
    if (found) return { made: { id: found, staged: false }, created: false, skipped: null };
    const decision = decideOverlap(job.overlap, this.overlap);
    if (decision === "SKIP") return { made: null, created: false, skipped: `a run is still active (overlap policy ${job.overlap})` };
    this.overlap = applyOverlap(this.overlap, decision);
    this.decisions.push(decision);
    const runId = `run-${req.fireKey}`;
    this.runs.set(req.fireKey, runId);
    const staged = req.notBefore !== undefined && req.notBefore > now;
    if (staged) this.staged.set(req.fireKey, req.notBefore!);
    return { made: { id: runId, staged }, created: true, skipped: null };
  }
}

export function modelStore(overlap: OverlapState = { active: 0, pending: 0 }, existing: Iterable<string> = []): ModelStore {
  return new ModelStore(overlap, existing);
}

/** What one fire did, as the port saw it. */
export interface ObservedFire {
  /** Every run request, in the order they were made. */
  requests: RunRequest[];
  /** Every ledger entry of the fire (as written, before insert-once absorbs repeats). */
  entries: LedgerEntry[];
  /** The advance written (null when the decision was drop or wait). */
  advance: JobAdvance | null;
  /** Where the timer was re-armed when the fire completed it (null: not re-armed). */
  rearmedAt: number | null;
}

/** The port over a model store; `seen` collects what this fire did. */
function memoryPort(store: ModelStore, now: number, seen: ObservedFire): FirePort<FiringJob> {
  return {
    loadJob: async () => store.job,
    waiting: { max: null, reserve: async () => ({ ok: true }), release() {} },
    findRunByFireKey: async (key) => {
      const id = store.runs.get(key);
      return id ? { _id: id } : null;
    },
    createRun: async (job, req) => {
      seen.requests.push(req);
      const made = store.materialize(job, req, now);
      store.effect("createRun");
      return made;
    },
    recordLedger: async (_job, entries) => {
      seen.entries.push(...entries);
      store.ledger.record(entries);
      store.effect("recordLedger");
    },
    advanceJob: async (job, a) => {
      seen.advance = a;
      const matched = !store.changed;
      if (matched) store.job = advanced(job, a);
      store.effect("advanceJob");
      return matched;
    },
    withdrawStaged: async (_job, _reason, ids) => {
      for (const [key, id] of [...store.runs]) {
        if (!ids.includes(id)) continue;
        store.runs.delete(key);
        store.staged.delete(key);
        store.ledger.byKey.delete(key);
      }
      store.effect("withdrawStaged");
    },
    complete: async (_fence, _timer, at) => {
      seen.rearmedAt = at;
      if (store.timer.inFlight) store.timer = { inFlight: false, at };
      store.effect("complete");
    },
  };
}

/**
 * One fire of `job` (stored first) at `now`, by the scheduler's JobFirer over the model store.
 * A store told to die throws Died; its state is then what the fire left.
 */
export async function fire(job: FireJob | null, now: number, options: FireOptions, random: () => number, store: ModelStore): Promise<ObservedFire> {
  store.job = job && { ownerId: "owner", ...job };
  store.timer = { inFlight: true, at: null };
  return replay(now, options, random, store);
}

/** The in-flight timer's fire run again against the job as stored (after a death, by the shard's next owner). */
export async function replay(now: number, options: FireOptions, random: () => number, store: ModelStore): Promise<ObservedFire> {
  const seen: ObservedFire = { requests: [], entries: [], advance: null, rearmedAt: null };
  const firer = new JobFirer<FiringJob>({ port: memoryPort(store, now, seen), log: silentLogger(), options, random });
  await firer.fire({ shard: 0, epoch: 1 }, `j:${store.job?._id ?? "gone"}`, store.job?._id ?? "gone", now);
  return seen;
}

/** The job after its advance applied (what store/jobs/scheduling.ts advanceJob writes). */
export function advanced<J extends FireJob>(job: J, a: JobAdvance): J {
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  return {
    ...job,
    handledThrough: new Date(a.handledThrough),
    lastSlotAt: date(a.lastSlotAt),
    nextSlotAt: date(a.nextSlotAt),
    nextFireAt: date(a.nextFireAt),
    rescheduledTo: null,
    status: a.status,
    firedCount: job.firedCount + a.firedIncrement,
  };
}

/** A job document as a fire reads it. */
export function fireJob(schedule: Schedule, over: Partial<FiringJob> & { handledThrough: Date }): FiringJob {
  const base: Omit<FiringJob, "handledThrough"> = {
    _id: "j",
    ownerId: "owner",
    status: "ACTIVE",
    paused: false,
    schedule,
    misfire: "FIRE_ONCE",
    catchupWindowMs: 0,
    overlap: "ALLOW",
    lastSlotAt: null,
    firedCount: 0,
    nextSlotAt: null,
    nextFireAt: null,
    rescheduledTo: null,
  };
  return { ...base, ...over } satisfies Pick<JobDoc, keyof FiringJob>;
}

/** An insert-once ledger: the first entry under a key stays (a second is absorbed, as in MongoDB). */
export class ModelLedger {
  readonly byKey = new Map<string, LedgerEntry>();
  /** Keys written again, with the outcome of the second write. */
  readonly repeats: LedgerEntry[] = [];

  record(entries: readonly LedgerEntry[]): void {
    for (const e of entries) {
      if (this.byKey.has(e.key)) this.repeats.push(e);
      else this.byKey.set(e.key, e);
    }
  }
}

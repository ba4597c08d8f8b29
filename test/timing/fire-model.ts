/**
 * A pure model of what the scheduler does with a fire decision (src/scheduler/fire-job.ts), so
 * the property tests drive the production decision (timing/decide-fire.ts) through the same
 * decide → apply → decide steps: a store that creates runs the way RunService.materialize does
 * (a run found under its fireKey is returned as is; otherwise the overlap decision table, against
 * the job's unfinished runs, may refuse it), and an insert-once ledger.
 */
import type { JobDoc } from "../../src/domain/documents.js";
import {
  applyOverlap,
  decideAdvance,
  decideFire,
  decideOverlap,
  decideStageAhead,
  runOutcome,
  type FireDecision,
  type FireJob,
  type FireOptions,
  type JobAdvance,
  type LedgerEntry,
  type OverlapDecision,
  type OverlapState,
  type RunRequest,
  type RunResult,
  type Schedule,
} from "../../src/timing/index.js";

export interface ModelStore {
  /** fireKey → runId */
  runs: Map<string, string>;
  /** The job's unfinished runs, as the overlap lock sees them. */
  overlap: OverlapState;
  /** The overlap decision of each run created, in order. */
  decisions: OverlapDecision[];
  /** Runs created with a future notBefore (staged), by fireKey → notBefore. */
  staged: Map<string, number>;
}

export function modelStore(overlap: OverlapState = { active: 0, pending: 0 }, existing: Iterable<string> = []): ModelStore {
  return { runs: new Map([...existing].map((k, i) => [k, `existing-${i}`])), overlap, decisions: [], staged: new Map() };
}

/** RunService.materialize, modelled: replay → the run found; else the overlap table decides. */
export function materialize(store: ModelStore, job: FireJob, req: RunRequest, now: number): RunResult {
  const found = store.runs.get(req.fireKey);
  if (found) return { runId: found };
  const decision = decideOverlap(job.overlap, store.overlap);
  if (decision === "SKIP") return { runId: null, skipped: `a run is still active (overlap policy ${job.overlap})` };
  store.overlap = applyOverlap(store.overlap, decision);
  store.decisions.push(decision);
  const runId = `run-${req.fireKey}`;
  store.runs.set(req.fireKey, runId);
  if (req.notBefore !== undefined && req.notBefore > now) store.staged.set(req.fireKey, req.notBefore);
  return { runId };
}

export interface SimulatedFire {
  decision: FireDecision;
  /** Every run request, in the order they were applied. */
  requests: RunRequest[];
  /** Every ledger entry of the fire. */
  entries: LedgerEntry[];
  /** null when the decision was drop or wait. */
  advance: JobAdvance | null;
}

/** One fire, as src/scheduler/fire-job.ts applies it. */
export function simulateFire(job: FireJob | null, now: number, options: FireOptions, random: () => number, store: ModelStore): SimulatedFire {
  const decision = decideFire(job, now, options);
  if (decision.kind !== "fire" || !job) return { decision, requests: [], entries: [], advance: null };
  const apply = (runs: readonly RunRequest[]) => {
    const entries = runs.map((r) => runOutcome(r, materialize(store, job, r, now), now));
    return { entries, fired: entries.filter((e) => e.outcome === "FIRED").length };
  };
  const due = apply(decision.runs);
  const ahead = decideStageAhead(job, decision, { handled: decision.handled, fired: due.fired }, now, options, random);
  const early = apply(ahead.runs);
  const entries = [...due.entries, ...decision.entries, ...early.entries];
  const advance = decideAdvance(job, { handled: ahead.handled, horizon: ahead.horizon, fired: due.fired + early.fired }, entries, options, random);
  return { decision, requests: [...decision.runs, ...ahead.runs], entries, advance };
}

/** The job after its advance applied (what store/jobs/scheduling.ts advanceJob writes). */
export function advanced(job: FireJob, a: JobAdvance): FireJob {
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
export function fireJob(schedule: Schedule, over: Partial<FireJob> & { handledThrough: Date }): FireJob {
  const base: Omit<FireJob, "handledThrough"> = {
    _id: "j",
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
  return { ...base, ...over } satisfies Pick<JobDoc, keyof FireJob>;
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

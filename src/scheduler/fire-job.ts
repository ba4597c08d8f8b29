/**
 * One due job timer `j:<jobId>`, fired: the decision is pure (timing/decide-fire.ts); this module
 * applies it (see README.md in this folder for the whole pipeline):
 *   1. claimDue parked the timer in the shard's in-flight set (with a deadline);
 *   2. decideFire: the slots due now under the job's misfire policy (or its reschedule);
 *   3. materialise a run per fired slot (unique fireKey: a replay creates nothing new; the store
 *      applies the overlap policy and may refuse: SKIPPED_OVERLAP; an owner with as many runs
 *      waiting to start as KAIROS_MAX_WAITING_RUNS allows gets none: SKIPPED_BACKLOG); a plan that
 *      ended at maxFires and had runs refused (they do not count) is followed by the slots due
 *      after it (decideDueRest), until none is left; then the same for the slots staged ahead
 *      (decideStageAhead);
 *   4. write the fire ledger (one outcome per slot, insert-once);
 *   5. advance the job's cursor and next fire (decideAdvance) with a version-conditional update;
 *   6. complete(): clear in-flight and re-arm at the next fire, in one atomic step.
 * Every effect goes through a port (fire-port.ts), so the property tests of firing drive this very
 * sequence against an in-memory store (test/timing/fire-port.ts).
 * Order matters: if the process dies anywhere before 6, the in-flight entry is replayed (at once by
 * the shard's next owner, or after its deadline) and steps 3–5 are idempotent; if a step fails
 * (Redis or MongoDB erred), the fire loop puts the timer back by its next pass (fire-loop.ts).
 */
import type { Logger } from "../support/index.js";
import type { JobDoc } from "../domain/index.js";
import { backlogSkipReason, changedSubject } from "../domain/index.js";
import type { ShardFence } from "../shared-state/index.js";
import {
  decideAdvance,
  decideDueRest,
  decideFire,
  decideStageAhead,
  runOutcome,
  type DueFire,
  type FireOptions,
  type LedgerEntry,
  type RunRequest,
} from "../timing/index.js";
import type { FirePort, FiringJob } from "./fire-port.js";

export interface JobFirerDeps<J extends FiringJob = JobDoc> {
  /** The effects of a fire (fire-port.ts: storeFirePort in production). */
  port: FirePort<J>;
  log: Logger;
  options: FireOptions;
  random: () => number;
}

/** How often the scheduler says, per owner, that slots are skipped for its backlog. */
const BACKLOG_LOG_MS = 60_000;

/** What creating a fire's runs gave: their ledger entries and how many runs exist for them. */
interface Created {
  entries: LedgerEntry[];
  fired: number;
}

export class JobFirer<J extends FiringJob = JobDoc> {
  /** When each owner's skipped slots were last logged (SKIPPED_BACKLOG is logged per owner, not per slot). */
  private readonly backlogLogged = new Map<string, number>();

  constructor(private readonly deps: JobFirerDeps<J>) {}

  async fire(fence: ShardFence, timerId: string, jobId: string, now: number, prefetched?: ReadonlyMap<string, J | null>): Promise<void> {
    const { port, options: o, random } = this.deps;
    const job = prefetched?.has(jobId) ? prefetched.get(jobId)! : await port.loadJob(jobId);
    const decision = decideFire(job, now, o);
    if (decision.kind !== "fire" || !job) {
      await port.complete(fence, timerId, decision.kind === "wait" ? decision.timerAt : null);
      return;
    }
    if (decision.error) this.deps.log.error({ jobId, error: decision.error }, "misfire catch-up refused");
    /** Runs created ahead of their due time by this pass. */
    const staged: string[] = [];
    const entries: LedgerEntry[] = [];
    let step: DueFire | null = decision;
    let last: DueFire = decision;
    let dueFired = 0;
    // The due slots: the plan, then, while a plan that ended at maxFires had runs refused, the rest.
    while (step) {
      const made = await this.createRuns(job, step.runs, now, staged);
      entries.push(...made.entries, ...step.entries);
      dueFired += made.fired;
      last = step;
      step = decideDueRest(job, step, { handled: step.handled, fired: dueFired }, now, o);
    }
    const ahead = decideStageAhead(job, last, { handled: last.handled, fired: dueFired }, now, o, random);
    const early = await this.createRuns(job, ahead.runs, now, staged);
    entries.push(...early.entries);
    await port.recordLedger(job, entries, now);

    const fired = dueFired + early.fired;
    const advance = decideAdvance(job, { handled: ahead.handled, horizon: ahead.horizon, fired }, entries, o, random);
    const advanced = await port.advanceJob(job, advance);
    // The user changed the job meanwhile (the version moved). "Matched", not "modified": a pass with
    // nothing new to record (a duplicate fire: a replayed or re-armed timer whose slot is handled
    // already) must still re-arm, or the job stops firing until the next full reconcile (the batch
    // marker changes either way). Runs this pass staged ahead belong to the job as it was: they are
    // taken back, and the slots are judged again under the job as it is now, at once: the timer is
    // completed due now. A change that re-armed or disarmed the timer (a new schedule, a pause, a
    // deletion) took it out of flight, so that completion is a no-op and the change's timer stands;
    // one that left it alone (a rename, a description: no re-arm) would otherwise have had it
    // dropped, the job silent until the reconciler's pass.
    if (!advanced && staged.length > 0) await port.withdrawStaged(job, `${changedSubject(job)} changed while its fire was being prepared`, staged);
    await port.complete(fence, timerId, advanced ? advance.timerAt : now);
  }

  /**
   * Creates the requested runs one after another (each is judged by the overlap policy against
   * the ones before it). A refused run is SKIPPED_OVERLAP and does not count; a run found under
   * its fireKey (a replay) counts as created. Ids of runs staged ahead are added to `staged`.
   * A slot whose job's owner has as many runs waiting to start as the bound allows makes none:
   * SKIPPED_BACKLOG, not counted, not retried (the schedule moves on, as after SKIPPED_OVERLAP).
   */
  private async createRuns(job: J, requests: readonly RunRequest[], now: number, staged: string[]): Promise<Created> {
    const out: Created = { entries: [], fired: 0 };
    const { port } = this.deps;
    const { waiting } = port;
    // A scheduled DAG's timer job: the DAG engine reserves its DAG run's first tasks itself (it reads the DAG).
    const size = job.dagId ? 0 : 1;
    for (const req of requests) {
      const room = await waiting.reserve(job.ownerId, size);
      // A replayed fire (the process died after making the run, before the ledger) keeps its run.
      const replayed = room.ok ? null : await port.findRunByFireKey(req.fireKey);
      if (replayed) {
        out.entries.push(runOutcome(req, { runId: replayed._id }, now));
        out.fired++;
        continue;
      }
      if (!room.ok) {
        const skipped = backlogSkipReason(room.waiting, waiting.max);
        out.entries.push(runOutcome(req, { runId: null, skipped, outcome: "SKIPPED_BACKLOG" }, now));
        this.logBacklog(job, room.waiting, now);
        continue;
      }
      let made;
      try {
        made = await port.createRun(job, req);
      } finally {
        waiting.release(job.ownerId, size);
      }
      const { made: fired, created, skipped, backlog } = made;
      if (fired && created && fired.staged) staged.push(fired.id);
      out.entries.push(runOutcome(req, fired ? { runId: fired.id } : { runId: null, skipped, ...(backlog ? { outcome: "SKIPPED_BACKLOG" as const } : {}) }, now));
      if (backlog) this.logBacklog(job, null, now);
      if (fired) out.fired++;
    }
    return out;
  }

  /** Logs that an owner's slots are skipped for its backlog, at most once a minute per owner. */
  private logBacklog(job: J, waiting: number | null, now: number): void {
    const last = this.backlogLogged.get(job.ownerId);
    if (last !== undefined && now - last >= 0 && now - last < BACKLOG_LOG_MS) return;
    if (this.backlogLogged.size >= 10_000) {
      for (const [owner, at] of this.backlogLogged) if (!(now - at >= 0 && now - at < BACKLOG_LOG_MS)) this.backlogLogged.delete(owner);
    }
    this.backlogLogged.set(job.ownerId, now);
    this.deps.log.warn(
      { ownerId: job.ownerId, jobId: job._id, waiting, max: this.deps.port.waiting.max },
      "slots skipped: the owner has as many runs waiting to start as KAIROS_MAX_WAITING_RUNS allows (SKIPPED_BACKLOG; logged once a minute per owner)",
    );
  }
}

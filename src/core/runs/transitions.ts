/**
 * Every status change of a run goes through here: one conditional, single-document update per
 * transition, checked against the lifecycle table, followed by a status event on the bus. What
 * a transition writes is its {@link RunChange}; how the write is fenced and sent is its
 * {@link TransitionWrite}, one intent per caller.
 */
import type { Filter } from "mongodb";
import type { RunDoc, RunTransition } from "../../domain/index.js";
import { RunStatus, coerceError, isTerminal, sourcesOf } from "../../domain/index.js";
import { metrics, type Logger } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { UpdateBatcher } from "../../store/index.js";
import type { Mongo } from "../../store/index.js";
import {
  LastRunWriter,
  applyTransition,
  claimedTransitionFilter,
  createTransitionBatcher,
  transitionFilter,
  transitionRun,
  transitionUpdate,
  type RunIncrements,
  type TransitionFilter,
} from "../../store/index.js";
import type { RunEvents } from "../events.js";

/** What a transition changes: its status, the fields it sets, the counters it bumps, its history entry. */
export interface RunChange {
  to: RunStatus;
  /** The statuses it may leave, narrowing those the lifecycle table allows (all of them when absent). */
  from?: readonly RunStatus[];
  set?: Partial<RunDoc>;
  inc?: RunIncrements;
  reason?: string | null;
  nodeId?: string | null;
  /** The attempt this transition belongs to, for the history entry, when the caller knows it. */
  attempt?: number | null;
  /** When the change happened, for the history entry, if before now (a result recorded late). */
  at?: Date;
}

/** The claim (QUEUED → RUNNING) an executor made by taking a run with its payload, as it would be written. */
export interface UnwrittenClaim {
  /** The run as it was enqueued (still QUEUED in the store). */
  queued: RunDoc;
  /** The run as the claim makes it (RUNNING, token + 1). */
  running: RunDoc;
  set: Partial<RunDoc>;
  entry: RunTransition;
}

/** How a transition is written, and what it is fenced by. */
export type TransitionWrite =
  /**
   * One findOneAndUpdate; the run after it is read back. `token`: only while the run still holds
   * this fencing token.
   */
  | { kind: "stored"; token?: number }
  /**
   * The caller holds the run as stored (`known`), and nothing but this transition can change what
   * the result reports (an executor confirming or finishing its own attempt, fenced by
   * `known.fencingToken`). The write joins the other batched transitions of this event-loop turn
   * in one bulkWrite, and the document after it is built from `known` instead of being read back.
   * `also`: more conditions the document must meet.
   */
  | { kind: "batched"; known: RunDoc; also?: Filter<RunDoc> }
  /**
   * The run is still QUEUED in the store: an executor took it with its payload and it ended
   * before the claim was confirmed. The claim (its fields, its history entry, the token bumped)
   * and this transition out of RUNNING are written as one batched update, applied only if
   * nothing moved the run since it was enqueued, and both status events are published.
   */
  | { kind: "claimed"; claim: UnwrittenClaim };

/** What a transition triggers in the other capabilities once it applied. */
export interface TransitionHooks {
  /** An attempt left RUNNING holding one of its owner's run slots: give it back (idempotent). */
  releaseUserSlot(ownerId: string, slot: string): Promise<void>;
  /** The run reached a final status and may hold its job's overlap lock: free it. */
  releaseOverlapLock(jobId: string, runId: string): Promise<void>;
  /** A DAG task instance's run reached a final status: its DAG run advances (src/dag/engine, injected by app/). */
  dagTaskEnded(run: RunDoc): Promise<void>;
  /** An executor's result is about to end a DAG task's run (RunServiceDeps.dagTaskEnding). */
  dagTaskEnding?(run: RunDoc, to: RunStatus): void;
}

const STORED: TransitionWrite = { kind: "stored" };

/** Which document the transition applies to: its id, a status it may leave, and what `write` fences it by. */
function filterOf(runId: string, allowed: readonly RunStatus[], write: TransitionWrite): TransitionFilter {
  switch (write.kind) {
    case "stored":
      return transitionFilter(runId, allowed, { token: write.token });
    case "batched":
      return transitionFilter(runId, allowed, { token: write.known.fencingToken, also: write.also });
    case "claimed":
      return claimedTransitionFilter(runId, write.claim.queued);
  }
}

export class Transitions {
  /** Batched transitions (executors finishing attempts) as bulkWrites. */
  private readonly batch: UpdateBatcher<RunDoc>;
  /** Each ended run as its job's last run (JobDoc.lastRun). */
  private readonly lastRuns: LastRunWriter;

  constructor(private readonly deps: { mongo: Mongo; clock: Clock; events: RunEvents; hooks: TransitionHooks; log?: Logger }) {
    this.batch = createTransitionBatcher(deps.mongo);
    this.lastRuns = new LastRunWriter(deps.mongo);
  }

  /**
   * One lifecycle transition as a conditional update: it applies only if the run is still in a
   * status the table allows (and whatever `write` fences it by). Returns the updated run, or
   * null when the condition no longer held (someone else moved it first, or the token is stale).
   */
  async apply(runId: string, change: RunChange, write: TransitionWrite = STORED): Promise<RunDoc | null> {
    const now = new Date(this.deps.clock());
    const { to } = change;
    const allowed = sourcesOf(to).filter((s) => !change.from || change.from.includes(s));
    const claim = write.kind === "claimed" ? write.claim : null;
    if (claim && !allowed.includes(RunStatus.RUNNING)) throw new Error(`run ${runId}: a claim cannot end in ${to}`);
    const entry: RunTransition = {
      status: to,
      at: change.at && change.at < now ? change.at : now,
      reason: change.reason ?? null,
      nodeId: change.nodeId ?? null,
      attempt: change.attempt ?? null,
    };
    const update = transitionUpdate({
      to,
      now,
      set: { ...claim?.set, ...change.set },
      entries: claim ? [claim.entry, entry] : [entry],
      inc: claim ? { fencingToken: 1 } : change.inc,
    });
    const filter = filterOf(runId, allowed, write);
    let updated: RunDoc | null;
    if (write.kind === "stored") updated = await transitionRun(this.deps.mongo, filter, update);
    else {
      const known = write.kind === "batched" ? write.known : write.claim.running;
      const writing = this.batch.updateOne(filter, update);
      // Its DAG run is read while the result is written: the advance after it then starts at its
      // decision. Asked for after the write, which goes out first (a store serving one request at
      // a time answers the result before the read).
      if (known.dagRunId && isTerminal(to)) this.deps.hooks.dagTaskEnding?.(known, to);
      const applied = await writing;
      updated = applied ? applyTransition(known, { set: change.set, status: to, updatedAt: now, entry, inc: change.inc }) : null;
    }
    if (updated) await this.applied(updated, to, allowed, claim, write.kind === "stored");
    return updated;
  }

  /**
   * A job's run ended: it becomes the job's last run unless a later-scheduled one ended already
   * (store/jobs/last-run.ts). Not a DAG task's run (its jobId is its DAG's), nor a withdrawn one
   * (it never ran). A failed write is logged, not thrown: the run did end, and its job's next
   * ending run writes the field again.
   */
  private async recordLastRun(run: RunDoc): Promise<void> {
    if (run.dagRunId || run.withdrawn) return;
    const last = { runId: run._id, status: run.status, trigger: run.trigger, scheduledFor: run.scheduledFor, finishedAt: run.finishedAt };
    await this.lastRuns.record(run.jobId, last).catch((e: unknown) => this.deps.log?.warn({ err: coerceError(e), runId: run._id, jobId: run.jobId }, "could not record the job's last run"));
  }

  /** What follows an applied transition: slots and locks given back, events, metrics. */
  private async applied(updated: RunDoc, to: RunStatus, allowed: readonly RunStatus[], claim: UnwrittenClaim | null, awaitLastRun: boolean): Promise<void> {
    const { hooks, events } = this.deps;
    // An attempt left RUNNING: give its owner's run slot back (idempotent).
    if (updated.userSlot && to !== RunStatus.RUNNING && allowed.includes(RunStatus.RUNNING)) {
      await hooks.releaseUserSlot(updated.ownerId, updated.userSlot);
    }
    // Published in this order (one bus message per turn), but not waited for before the hooks: a
    // DAG task's end advances its DAG run while its events travel. A failed publish still fails
    // the call, after the hooks.
    const published = claim ? Promise.all([events.publish(claim.running), events.publish(updated)]) : events.publish(updated);
    published.catch(() => undefined);
    // A staged run taken back never ran: counted as WITHDRAWN, as the API reports it, not among the cancels.
    if (isTerminal(to)) metrics.runsFinished.inc({ status: updated.withdrawn ? "WITHDRAWN" : to });
    if (isTerminal(to) && updated.overlap !== "ALLOW") await hooks.releaseOverlapLock(updated.jobId, updated._id);
    if (isTerminal(to) && updated.dagRunId) await hooks.dagTaskEnded(updated);
    // A caller of the API (a cancel, a system decision) reads the job's lastRun right after; an
    // executor writing its results does not wait for it (it is written in the same turn's batch).
    if (isTerminal(to)) {
      const last = this.recordLastRun(updated);
      if (awaitLastRun) await last;
    }
    await published;
  }
}

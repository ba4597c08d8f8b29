/**
 * Why a job makes no runs now, or its runs do not start (`Job.problems`), from the job as stored
 * and the facts the scheduler and the claim path decide on: the latest outcome in its fire ledger
 * (core/fires.ts), its overlap lock (core/runs/overlap.ts), its owner's run slots and the runs
 * they parked (core/runs/user-slots.ts), its pool's executors (core/pools.ts), the owner's runs
 * waiting against KAIROS_MAX_WAITING_RUNS (core/runs/waiting.ts) and submission budget
 * (auth/rate-limit.ts). Pure: the facts are read by {@link WaitReads}. Empty: nothing holds it.
 */
import type { FireDoc, JobDoc, WaitReason } from "../../domain/index.js";
import { FireOutcome, OverlapPolicy, WaitCode } from "../../domain/index.js";
import type { JobQueueSummary } from "../../store/index.js";

export interface JobProblemFacts {
  now: number;
  /** Why no online executor takes the job's runs; null when one does. */
  unserved: string | null;
  /** The owner's `maxConcurrentRuns` and the slots RUNNING runs hold; null: no limit. */
  owner: { limit: number; taken: number } | null;
  /** The job's QUEUED runs; null: none. */
  queue: JobQueueSummary | null;
  /** The ledger entry of the job's latest handled slot (`lastSlotAt`). */
  lastFire: FireDoc | null;
  /** The run holding the job's overlap lock, when it holds one, with its status. */
  active: { id: string; status: string } | null;
  /** The owner's runs waiting to start, when at KAIROS_MAX_WAITING_RUNS. */
  backlog: { waiting: number; max: number } | null;
  /** The owner's submission budget, when spent. */
  budget: { until: Date; points: number; durationMs: number } | null;
  /** Whether the job has runs staged ahead of their fire time (fires still to come). */
  staged: boolean;
}

type ProblemJob = Pick<JobDoc, "paused" | "pausedAt" | "ownerDeleted" | "status" | "lastSlotAt" | "updatedAt" | "overlap" | "misfire" | "catchupWindowMs" | "activeRunId" | "pendingRunId" | "spec">;

const iso = (d: Date) => d.toISOString();

export function jobProblems(job: ProblemJob, f: JobProblemFacts): WaitReason[] {
  const out: WaitReason[] = [];
  const last = f.lastFire;
  const lastSince = last ? last.slotAt : null;
  if (job.ownerDeleted) {
    out.push({ code: WaitCode.OWNER_DELETED, message: "its owner was deleted and the job was kept, paused, for reference: it cannot be resumed or triggered. Create a job of your own from its spec", since: job.pausedAt ?? null, until: null });
  } else if (job.paused) {
    out.push({ code: WaitCode.PAUSED, message: "the job is paused: no fire is made, and slots that fall meanwhile are recorded SKIPPED_PAUSED, not run later. Resume it with resumeJob (kairos resume)", since: job.pausedAt ?? null, until: null });
  } else if (job.status === "COMPLETED" && !f.staged) {
    out.push({ code: WaitCode.NO_MORE_FIRES, message: "its schedule has no fires left (a ONCE that fired, maxFires reached, or past endAt). Give it a new schedule (updateJob), or run it once with triggerJob", since: job.lastSlotAt ?? job.updatedAt, until: null });
  }
  if (f.unserved) {
    out.push({ code: WaitCode.POOL_UNSERVED, message: `${f.unserved}. Start an executor with KAIROS_POOLS including "${job.spec.pool}", or change the job's spec.pool to a served one (updateJob)`, since: null, until: null });
  }
  if (f.owner && f.queue && f.queue.queued > 0 && (f.queue.parked > 0 || f.owner.taken >= f.owner.limit)) {
    out.push({
      code: WaitCode.USER_CONCURRENCY_LIMIT,
      message:
        `your concurrency limit is reached: ${f.owner.taken} of your ${f.owner.limit} run slots (maxConcurrentRuns) are held by RUNNING runs, and ${f.queue.queued} run${f.queue.queued === 1 ? "" : "s"} of this job wait${f.queue.queued === 1 ? "s" : ""} for one` +
        `${f.queue.parked ? ` (${f.queue.parked} parked out of the queue)` : ""}. Cancel a running run to free a slot, or ask an administrator to raise your maxConcurrentRuns (setUserConcurrencyLimit)`,
      since: f.queue.parkedSince,
      until: null,
    });
  }
  const lockSkips = f.active && (job.overlap === OverlapPolicy.FORBID || (job.overlap === OverlapPolicy.QUEUE_ONE && job.pendingRunId));
  if (lockSkips || last?.outcome === FireOutcome.SKIPPED_OVERLAP) {
    const holder = f.active ? `run ${f.active.id} (${f.active.status}) holds the job's overlap lock` : "another run held the job's overlap lock";
    const queued = job.overlap === OverlapPolicy.QUEUE_ONE && job.pendingRunId ? ` and run ${job.pendingRunId} already waits behind it` : "";
    const lastSkip = last?.outcome === FireOutcome.SKIPPED_OVERLAP ? `; its last slot ${iso(last.slotAt)} was skipped (SKIPPED_OVERLAP)` : "";
    out.push({
      code: WaitCode.OVERLAP,
      message: `${holder}${queued}, so under overlap policy ${job.overlap} its fires are skipped until it ends${lastSkip}. Cancel the long run (cancelRun), or choose ALLOW, QUEUE_ONE or REPLACE (updateJob)`,
      since: last?.outcome === FireOutcome.SKIPPED_OVERLAP ? lastSince : null,
      until: null,
    });
  }
  if (last?.outcome === FireOutcome.MISSED) {
    out.push({
      code: WaitCode.MISFIRE,
      message:
        `its last slot ${iso(last.slotAt)} was not run under misfire policy ${job.misfire}${last.reason ? ` (${last.reason})` : ""}: it came due while no scheduler could fire it in time ` +
        `(catch-up window ${Math.round(job.catchupWindowMs / 1000)} s). Run it now with triggerJob or backfillJob; a longer catchupWindow or FIRE_ALL runs late slots next time`,
      since: lastSince,
      until: null,
    });
  }
  if (last?.outcome === FireOutcome.SKIPPED_DST) {
    out.push({ code: WaitCode.DST_SKIPPED, message: `its last slot ${iso(last.slotAt)} fell in a daylight-saving gap and its schedule says dstGap SKIP; use dstGap SHIFT to run such slots`, since: lastSince, until: null });
  }
  if (f.backlog || last?.outcome === FireOutcome.SKIPPED_BACKLOG) {
    const now = f.backlog ? `you have ${f.backlog.waiting} runs waiting to start (QUEUED or PENDING), the most KAIROS_MAX_WAITING_RUNS (${f.backlog.max}) allows, so its next fires are skipped` : "your runs waiting to start were at KAIROS_MAX_WAITING_RUNS";
    const skipped = last?.outcome === FireOutcome.SKIPPED_BACKLOG ? `; its last slot ${iso(last.slotAt)} was skipped (SKIPPED_BACKLOG)` : "";
    out.push({ code: WaitCode.BACKLOG, message: `${now}${skipped}. Let the waiting runs start (see their waiting reasons), or cancel some`, since: last?.outcome === FireOutcome.SKIPPED_BACKLOG ? lastSince : null, until: null });
  }
  if (f.budget) {
    out.push({
      code: WaitCode.RATE_LIMITED,
      message:
        `your submission budget is spent (at most ${f.budget.points} per ${Math.round(f.budget.durationMs / 1000)} s, KAIROS_RATE_SUBMISSIONS): triggerJob, backfillJob and retryRun are refused RATE_LIMITED until ${iso(f.budget.until)}. ` +
        "Scheduled fires are not rate limited; wait for the budget to refill, or make fewer calls (a backfill or DAG trigger counts one per run it makes)",
      since: null,
      until: f.budget.until,
    });
  }
  return out;
}

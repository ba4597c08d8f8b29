/** Runs made on request, outside the schedule: a manual trigger, and backfill of a past range. */
import type { Principal } from "../../auth/index.js";
import type { RunDoc } from "../../domain/index.js";
import { PreconditionError, ValidationError } from "../../domain/index.js";
import { manualFireKey } from "../../domain/index.js";
import { describeSchedule, slotsBetween, type Schedule, type Slot } from "../../timing/index.js";
import { newId } from "../../store/index.js";
import { findRunsByIds } from "../../store/index.js";
import type { BackfillOutcome, Submit } from "./types.js";
import { assertOwned, type JobsKit } from "./writes.js";

/** Most slots one backfillJob call may create. */
export const MAX_BACKFILL = 1_000;

export class JobTriggers {
  constructor(private readonly kit: JobsKit) {}

  /** Runs the job now, outside its schedule (a paused job can be triggered too). */
  async trigger(caller: Principal, jobId: string, opts: Submit = {}): Promise<RunDoc> {
    if (opts.idempotencyKey == null) return this.triggerOnce(caller, jobId, newId());
    return this.kit.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "triggerJob",
      input: { jobId },
      run: (opId) => this.triggerOnce(caller, jobId, opId),
      save: (run) => ({ runId: run._id }),
      load: async ({ runId }) => {
        const run = await this.kit.deps.runs.get(String(runId));
        if (!run) throw new PreconditionError(`idempotency key "${opts.idempotencyKey}" made run ${String(runId)}, which no longer exists`);
        return run;
      },
    });
  }

  /** The manual fire `opId` of the job: its fireKey makes a repeat of the same operation a no-op. */
  private async triggerOnce(caller: Principal, jobId: string, opId: string): Promise<RunDoc> {
    const job = assertOwned(await this.kit.writes.getFor(caller, jobId));
    await this.kit.deps.runs.waiting.admit(job.ownerId, 1);
    const now = this.kit.deps.clock();
    const { run, skipped } = await this.kit.deps.runs.materialize(job, {
      scheduledFor: now,
      trigger: "MANUAL",
      fireKey: manualFireKey(jobId, opId),
      reason: `triggered by ${caller.username}`,
    });
    if (!run) throw new PreconditionError(`not triggered: ${skipped}`);
    return run;
  }

  /**
   * Creates the runs for the slots of a past range `[from, to]`, as if they had fired (trigger
   * BACKFILL). Slots that already have a run (same fireKey) are not run again. Bounded: a range
   * with more than {@link MAX_BACKFILL} slots is refused. Backfill runs ignore the overlap policy
   * (they are an explicit request for exactly these runs); slots without a ledger outcome get FIRED.
   */
  async backfill(caller: Principal, jobId: string, from: number, to: number, opts: Submit = {}): Promise<BackfillOutcome> {
    if (opts.idempotencyKey == null) return this.backfillOnce(caller, jobId, from, to, opts);
    return this.kit.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "backfillJob",
      input: { jobId, from, to },
      // Backfill runs are keyed by slot (fireKey), so running it again makes nothing new.
      run: () => this.backfillOnce(caller, jobId, from, to, opts),
      save: (r) => ({ requested: r.requested, existing: r.existing, runIds: r.created.map((x) => x._id) }),
      load: async (saved) => {
        const ids = (saved.runIds as string[]) ?? [];
        const runs = await findRunsByIds(this.kit.deps.mongo, ids);
        const byId = new Map(runs.map((r) => [r._id, r]));
        return { requested: Number(saved.requested), existing: Number(saved.existing), created: ids.flatMap((id) => byId.get(id) ?? []) };
      },
    });
  }

  private async backfillOnce(caller: Principal, jobId: string, from: number, to: number, opts: Submit): Promise<BackfillOutcome> {
    const job = assertOwned(await this.kit.writes.getFor(caller, jobId));
    const now = this.kit.deps.clock();
    const slots = backfillSlots(job.schedule, from, to, now);
    // The owner's bound on waiting runs first: a refused backfill takes nothing from the budget.
    await this.kit.deps.runs.waiting.admit(job.ownerId, slots.length);
    await opts.admit?.(slots.length, `; a backfill counts one per slot (this range holds ${slots.length})`);
    const created: RunDoc[] = [];
    let existing = 0;
    for (const slot of slots) {
      const { run, created: isNew } = await this.kit.deps.runs.materialize(job, {
        scheduledFor: slot.at,
        trigger: "BACKFILL",
        reason: `backfill by ${caller.username}`,
        ignoreOverlap: true,
      });
      if (isNew && run) created.push(run);
      else existing++;
    }
    await this.kit.ledger.record(
      job,
      created.map((r) => ({ slotAt: r.scheduledFor.getTime(), outcome: "FIRED" as const, runId: r._id, latenessMs: now - r.scheduledFor.getTime(), reason: "backfill" })),
      now,
    );
    this.kit.deps.log.info({ jobId, slots: slots.length, created: created.length }, "backfill");
    return { requested: slots.length, created, existing };
  }
}

/** The slots of `schedule` in the past range `[from, to]`; refused when there are none or more than MAX_BACKFILL. */
export function backfillSlots(schedule: Schedule, from: number, to: number, now: number): Slot[] {
  if (!(from <= to)) throw new ValidationError("to", "must not be before from");
  if (to > now) throw new ValidationError("to", `${new Date(to).toISOString()} is in the future; backfill covers past slots only`);
  const { slots, truncated } = slotsBetween(schedule, from - 1, to, MAX_BACKFILL, 0);
  if (truncated) {
    throw new ValidationError("from", `the range holds more than ${MAX_BACKFILL} slots; backfill at most ${MAX_BACKFILL} at a time`);
  }
  if (slots.length === 0) {
    const start = new Date(schedule.startAt).toISOString();
    if (to < schedule.startAt) {
      // The usual case: a range before the job or DAG was made, since startAt defaults to then.
      throw new ValidationError(
        "from",
        `the range holds no slot of the schedule (${describeSchedule(schedule)}): it ends before the schedule's startAt, ${start} ` +
          `(by default the time the schedule was set), and a schedule has no slots before its startAt; ` +
          `to backfill earlier slots, give the schedule an earlier startAt first (updateJob or updateDag)`,
      );
    }
    throw new ValidationError("from", `the range holds no slot of the schedule (${describeSchedule(schedule)}; its slots start at ${start})`);
  }
  return slots;
}

/**
 * DEADLINE_MISSED (docs/alerts.md, "Deadlines"): a slot's run not finished `deadline` after the
 * slot's scheduled time. A deadline is a timer on the time wheel of the job's shard,
 * `d:<ruleId>:<fireKey>`, armed when the slot fires (the scheduler arms it right after the fire's
 * ledger is written) and handled by the shard's owner through the same fenced claim as fires:
 *   - durable: the deadline is recorded in `alertDeadlines` before it is armed, and the reconciler
 *     re-arms every ARMED one missing from the wheel, so a Redis flush or a crash loses none;
 *   - once: the alert is a firing `<ruleId>|deadline:<fireKey>`, inserted once whoever handles the
 *     timer and however often (a replay after a kill), and the record is DONE after it;
 *   - never for a run that finished in time: the handler reads the run a grace after the deadline
 *     (KAIROS_ALERT_TIMER_GRACE, DEADLINE_GRACE_MS by default: an end is written a moment after it
 *     is stamped), and a run that ended (any final status) by the deadline sends nothing.
 */
import { AlertEvent, deadlineTimerId, FireOutcome, isTerminal, type AlertRuleDoc, type JobDoc } from "../../domain/index.js";
import { shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import { allAlertRules, armedDeadlines, ensureDeadlineIndexes, findAlertRule, findDeadline, findRunByFireKey, insertFirings, markDeadlineDone, createDeadlineBatch, recordDeadlines, type AlertDeadlineDoc, type Mongo } from "../../store/index.js";
import { deadlineFiring, inScope, live } from "./match.js";

/**
 * How long after a deadline its timer is handled: a run's end is stamped by its executor and written
 * a moment later (batched), so a run that ended just in time may still read RUNNING at the deadline
 * itself. Whether it was in time is judged on its end, not on when the handler ran. The default of
 * KAIROS_ALERT_TIMER_GRACE (AlertSettings.timerGraceMs).
 */
export const DEADLINE_GRACE_MS = 5_000;
/** How long the list of deadline rules is reused before it is read again. */
const RULES_TTL_MS = 2_000;
const MAX_RULES = 100_000;

/** What a fired slot says (a ledger entry's fields the deadline needs). */
export interface FiredSlot {
  key: string;
  slotAt: number;
  outcome: string;
  runId: string | null;
}

export class AlertDeadlines {
  private rules: { at: number; list: Promise<AlertRuleDoc[]> } | null = null;
  private indexed: Promise<void> | null = null;
  private batch: ReturnType<typeof createDeadlineBatch> | null = null;
  /** How long after its deadline a timer is handled. */
  readonly graceMs: number;

  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; log: Logger; graceMs?: number }) {
    this.graceMs = deps.graceMs ?? DEADLINE_GRACE_MS;
  }

  /** Arms the deadlines of the rules watching `job` for its slots that fired. Safe to repeat (a replayed fire). */
  async armFor(job: Pick<JobDoc, "_id" | "ownerId" | "name">, slots: readonly FiredSlot[]): Promise<void> {
    const fired = slots.filter((s) => s.outcome === FireOutcome.FIRED);
    if (fired.length === 0) return;
    const rules = (await this.deadlineRules()).filter((r) => inScope(r, job.ownerId, job._id));
    if (rules.length === 0) return;
    await (this.indexed ??= ensureDeadlineIndexes(this.deps.mongo));
    const { wheel } = this.deps.state;
    const shard = shardOf(job._id, wheel.shardCount);
    const now = new Date(this.deps.clock());
    const docs: AlertDeadlineDoc[] = rules.flatMap((rule) =>
      fired.map((s) => ({
        _id: `${rule._id}|${s.key}`, ruleId: rule._id, ownerId: job.ownerId, jobId: job._id, jobName: job.name, fireKey: s.key, runId: s.runId,
        slotAt: new Date(s.slotAt), dueAt: new Date(s.slotAt + rule.deadlineMs!), shard, state: "ARMED" as const, createdAt: now,
      })),
    );
    // Recorded before armed (the record is what the reconciler re-arms from): one insert shared by
    // the fires of the same moment, then the timers in one pipelined round.
    const stored = await recordDeadlines(this.deps.mongo, (this.batch ??= createDeadlineBatch(this.deps.mongo)), docs);
    await Promise.all(stored.filter((d) => d.state === "ARMED").map((d) => wheel.arm(shard, deadlineTimerId(d.ruleId, d.fireKey), d.dueAt.getTime() + this.graceMs)));
  }

  /** Handles a due deadline timer: the alert when the slot's run had not finished by then. Idempotent. */
  async handle(ruleId: string, fireKey: string): Promise<void> {
    const id = `${ruleId}|${fireKey}`;
    const d = await findDeadline(this.deps.mongo, id);
    if (!d || d.state === "DONE") return;
    const rule = await findAlertRule(this.deps.mongo, ruleId);
    const now = this.deps.clock();
    if (rule && rule.on.includes(AlertEvent.DEADLINE_MISSED)) {
      const run = await findRunByFireKey(this.deps.mongo, fireKey);
      const inTime = run !== null && isTerminal(run.status) && run.finishedAt !== null && run.finishedAt.getTime() <= d.dueAt.getTime();
      if (!inTime && live(rule, d.dueAt, now)) {
        const status = run ? (run.status === "RUNNING" || run.status === "QUEUED" ? `still ${run.status}` : `${run.status}, finished ${run.finishedAt?.toISOString() ?? "never"}`) : null;
        await insertFirings(this.deps.mongo, [deadlineFiring({ ...rule, deadlineMs: d.dueAt.getTime() - d.slotAt.getTime() }, { fireKey, jobId: d.jobId, jobName: d.jobName, runId: run?._id ?? d.runId, slotAt: d.slotAt, status }, now)]);
      }
    }
    await markDeadlineDone(this.deps.mongo, id);
  }

  /** Re-arms the ARMED deadlines of `shards` missing from the wheel (after a Redis flush); how many. */
  async rearm(shards: readonly number[], missing: (shard: number, timerId: string) => Promise<boolean>): Promise<number> {
    if (shards.length === 0) return 0;
    let armed = 0;
    for (const d of await armedDeadlines(this.deps.mongo, shards, 10_000)) {
      const id = deadlineTimerId(d.ruleId, d.fireKey);
      if (!(await missing(d.shard, id))) continue;
      await this.deps.state.wheel.arm(d.shard, id, d.dueAt.getTime() + this.graceMs);
      armed++;
    }
    return armed;
  }

  private deadlineRules(): Promise<AlertRuleDoc[]> {
    const now = this.deps.clock();
    if (!this.rules || now - this.rules.at > RULES_TTL_MS) {
      const list = allAlertRules(this.deps.mongo, MAX_RULES).then((rs) => rs.filter((r) => r.on.includes(AlertEvent.DEADLINE_MISSED) && r.deadlineMs !== null));
      list.catch(() => (this.rules = null));
      this.rules = { at: now, list };
    }
    return this.rules.list;
  }
}

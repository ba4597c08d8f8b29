/**
 * Alert rules as users manage them (createAlertRule, alertRules, updateAlertRule, deleteAlertRule,
 * muteAlertRule, alertDeliveries, testAlertRule): a user's own rules, an administrator's on any
 * user's or cluster-wide; another user's rule is NOT_FOUND. docs/alerts.md.
 */
import { canSee, visible, visibleJob, type Principal } from "../../auth/index.js";
import { AlertDeliveryStatus, LimitReachedError, ValidationError, type AlertDeliveryDoc, type AlertRuleDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import { formatDuration } from "../../timing/index.js";
import {
  countAlertRules,
  deleteAlertRule,
  deliveriesPage,
  findAlertRule,
  findDagOwner,
  findJob,
  insertAlertRule,
  insertDelivery,
  listAlertRules,
  newId,
  setAlertRule,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import type { AlertBus } from "./bus.js";
import { alertMessage } from "./message.js";
import type { AlertSender } from "./sender.js";
import { readWatchedSchedule, silenceScope } from "./silence-scope.js";
import type { AlertSilences } from "./silences.js";
import { checkAlertRule, checkSilentSchedule, type AlertRuleInput, type CheckedRule } from "./validate.js";

/** Longest a mute may last. */
const MAX_MUTE_MS = 366 * 24 * 3600_000;

export interface AlertRulesDeps {
  mongo: Mongo;
  clock: Clock;
  sender: AlertSender;
  bus: AlertBus;
  /** Most rules one user may have. */
  maxRulesPerUser: number;
  /** SCHEDULE_SILENT watches, armed as a rule is made or changed (the reconciler arms any missed). */
  silences?: Pick<AlertSilences, "watch" | "watchAll" | "forget">;
}

export class AlertRules {
  constructor(private readonly deps: AlertRulesDeps) {}

  async create(p: Principal, input: AlertRuleInput, ownerId = p.userId): Promise<AlertRuleDoc> {
    const checked = checkAlertRule(input, p.role === "ADMIN");
    await this.checkTarget(checked.webhook.url);
    await this.checkScope(p, checked, input.silentFor ?? null, ownerId);
    const n = await countAlertRules(this.deps.mongo, ownerId);
    if (n >= this.deps.maxRulesPerUser) {
      throw new LimitReachedError(`you have ${n} alert rules, the most allowed (KAIROS_ALERT_MAX_RULES): delete one first, or widen one rule's scope`);
    }
    const now = new Date(this.deps.clock());
    const doc: AlertRuleDoc = { _id: newId(), ownerId, ...checked, mutedUntil: null, createdAt: now, updatedAt: now, lastDeliveryAt: null };
    await insertAlertRule(this.deps.mongo, doc);
    // Counted again once inserted (as API keys are): of concurrent creations, the last to insert sees
    // them all, so no burst takes the owner past the limit (a burst may be refused a little early).
    const after = await countAlertRules(this.deps.mongo, ownerId);
    if (after > this.deps.maxRulesPerUser) {
      await deleteAlertRule(this.deps.mongo, doc._id);
      throw new LimitReachedError(`you have ${this.deps.maxRulesPerUser} alert rules, the most allowed (KAIROS_ALERT_MAX_RULES): delete one first, or widen one rule's scope`);
    }
    await this.watchSilence(doc);
    return doc;
  }

  /** A page of the caller's rules (an administrator: a user's with `userId`, or everyone's with `all`), newest first. */
  async list(p: Principal, opts: { userId?: string | null; all?: boolean | null }, page: PageQuery): Promise<Page<AlertRuleDoc>> {
    if (opts.all) {
      if (p.role !== "ADMIN") throw new ValidationError("all", "only administrators may list every user's rules");
      return listAlertRules(this.deps.mongo, null, page);
    }
    const ownerId = opts.userId ?? p.userId;
    // Another user's rules: an empty page (as the list was empty before paging), never theirs.
    if (!canSee(p, ownerId)) return { edges: [], pageInfo: { hasNextPage: false, endCursor: null } };
    return listAlertRules(this.deps.mongo, ownerId, page);
  }

  async get(p: Principal, id: string): Promise<AlertRuleDoc> {
    return visible(p, "alert rule", id, await findAlertRule(this.deps.mongo, id));
  }

  /** Changes the fields given; the others stay. The whole rule is checked again. */
  async update(p: Principal, id: string, patch: Partial<AlertRuleInput>): Promise<AlertRuleDoc> {
    const rule = await this.get(p, id);
    const merged: AlertRuleInput = {
      name: patch.name ?? rule.name,
      on: patch.on ?? rule.on,
      jobId: patch.jobId !== undefined ? patch.jobId : rule.jobId,
      dagId: patch.dagId !== undefined ? patch.dagId : rule.dagId,
      cluster: patch.cluster ?? rule.cluster,
      webhook: patch.webhook ?? rule.webhook,
      failureRate: patch.failureRate !== undefined ? patch.failureRate : rule.failureRate ? { window: formatDuration(rule.failureRate.windowMs), threshold: rule.failureRate.threshold, minRuns: rule.failureRate.minRuns } : null,
      queueLateness: patch.queueLateness !== undefined ? patch.queueLateness : rule.queueLatenessMs !== null ? formatDuration(rule.queueLatenessMs) : null,
      deadline: patch.deadline !== undefined ? patch.deadline : rule.deadlineMs !== null ? formatDuration(rule.deadlineMs) : null,
      silentFor: patch.silentFor !== undefined ? patch.silentFor : rule.silentForMs != null ? formatDuration(rule.silentForMs) : null,
    };
    // A field that no longer applies to the events named is dropped rather than refused.
    const on = new Set(merged.on);
    if (!on.has("FAILURE_RATE") && patch.failureRate === undefined) merged.failureRate = null;
    if (!on.has("QUEUE_LATENESS") && patch.queueLateness === undefined) merged.queueLateness = null;
    if (!on.has("DEADLINE_MISSED") && patch.deadline === undefined) merged.deadline = null;
    if (!on.has("SCHEDULE_SILENT") && patch.silentFor === undefined) merged.silentFor = null;
    const checked = checkAlertRule(merged, p.role === "ADMIN");
    // Cluster-wide rules are their maker's: an administrator turning it on for another user's rule
    // would send every user's alerts to that user's webhook.
    if (checked.cluster && !rule.cluster && rule.ownerId !== p.userId) {
      throw new ValidationError("cluster", "a cluster-wide rule is its maker's: this rule is another user's; make a cluster-wide rule of your own");
    }
    if (patch.webhook) await this.checkTarget(checked.webhook.url);
    const watchChanged = checked.silentForMs !== (rule.silentForMs ?? null) || !rule.on.includes("SCHEDULE_SILENT");
    if (checked.jobId !== rule.jobId || checked.dagId !== rule.dagId || (checked.silentForMs !== null && watchChanged)) {
      await this.checkScope(p, checked, merged.silentFor ?? null, rule.ownerId);
    }
    const after = await setAlertRule(this.deps.mongo, id, { ...checked, updatedAt: new Date(this.deps.clock()) });
    // What it watches changed: the watches it no longer has end now, the new ones are armed. A
    // change that leaves them as they were (its name, its webhook) does not walk them again.
    if (after && (JSON.stringify(silenceScope(rule)) !== JSON.stringify(silenceScope(after)) || rule.silentForMs !== after.silentForMs)) {
      await this.unwatchSilence(after);
      await this.watchSilence(after);
    }
    return visible(p, "alert rule", id, after);
  }

  /**
   * A webhook URL the sender would refuse (loopback, private, … unless KAIROS_ALERT_ALLOWED_CIDRS
   * allows it) is refused as it is saved, by the sender's own check; each delivery is checked again.
   */
  private async checkTarget(url: string): Promise<void> {
    const refusal = await this.deps.sender.refusal(url);
    if (refusal) throw new ValidationError("webhook.url", refusal);
  }

  async delete(p: Principal, id: string): Promise<boolean> {
    const rule = await this.get(p, id);
    const deleted = await deleteAlertRule(this.deps.mongo, id);
    // Its SCHEDULE_SILENT watches go with it, not when each comes due (up to silentFor, a year, later).
    if (silenceScope(rule)) await this.unwatchSilence(null, id);
    return deleted;
  }

  /** No alert of the rule until `until` (null: unmuted now). */
  async mute(p: Principal, id: string, until: Date | null): Promise<AlertRuleDoc> {
    await this.get(p, id);
    const now = this.deps.clock();
    if (until !== null && until.getTime() <= now) throw new ValidationError("until", `must be in the future (got ${until.toISOString()}); to unmute, pass null`);
    if (until !== null && until.getTime() - now > MAX_MUTE_MS) throw new ValidationError("until", "a mute lasts at most 366 days; delete the rule instead");
    return visible(p, "alert rule", id, await setAlertRule(this.deps.mongo, id, { mutedUntil: until, updatedAt: new Date(now) }));
  }

  async deliveries(p: Principal, ruleId: string, page: PageQuery): Promise<Page<AlertDeliveryDoc>> {
    await this.get(p, ruleId);
    return deliveriesPage(this.deps.mongo, ruleId, page);
  }

  /** Sends a test delivery now (one attempt, not retried) and returns it as recorded. */
  async test(p: Principal, id: string): Promise<AlertDeliveryDoc> {
    const rule = await this.get(p, id);
    const now = new Date(this.deps.clock());
    const deliveryId = newId();
    const msg = alertMessage(deliveryId, rule, [], { test: true, at: now });
    const doc: AlertDeliveryDoc = {
      _id: deliveryId, ruleId: rule._id, ownerId: rule.ownerId, test: true, events: [], count: 0, firingIds: [], runIds: [], body: msg.body, url: rule.webhook.url,
      status: AlertDeliveryStatus.PENDING, attempts: 0, nextAttemptAt: now, leaseUntil: null, responseCode: null, error: null, createdAt: now, deliveredAt: null,
    };
    await insertDelivery(this.deps.mongo, doc);
    await this.deps.bus.publish(doc, rule.name).catch(() => undefined);
    return (await this.deps.sender.attempt(doc, { retry: false })) ?? doc;
  }

  /**
   * A job or DAG the rule may watch: the owner's (another user's id is NOT_FOUND); for
   * SCHEDULE_SILENT, a recurring schedule (validate.ts checkSilentSchedule).
   */
  private async checkScope(p: Principal, rule: CheckedRule, silentFor: string | null, ownerId: string): Promise<void> {
    const { jobId, dagId } = rule;
    const silentForMs = rule.silentForMs ?? null;
    if (jobId !== null) {
      const job = visibleJob(p, jobId, await findJob(this.deps.mongo, jobId));
      if (job.ownerId !== ownerId) throw new ValidationError("jobId", `job ${jobId} belongs to another user than the rule`);
      if (silentForMs !== null) checkSilentSchedule(silentForMs, silentFor ?? "", { field: "jobId", id: jobId, schedule: job.schedule, dagTimer: Boolean(job.dagId) }, this.deps.clock());
    }
    if (dagId !== null) {
      const dag = visible(p, "DAG", dagId, await findDagOwner(this.deps.mongo, dagId));
      if (dag.ownerId !== ownerId) throw new ValidationError("dagId", `DAG ${dagId} belongs to another user than the rule`);
      if (silentForMs !== null) {
        const watched = await readWatchedSchedule(this.deps.mongo, { id: dagId, dag: true });
        checkSilentSchedule(silentForMs, silentFor ?? "", { field: "dagId", id: dagId, schedule: watched?.schedule ?? null, dagTimer: false }, this.deps.clock());
      }
    }
  }

  /**
   * Ends the SCHEDULE_SILENT watches a rule no longer has (`rule` null: it was deleted): all of them,
   * or those of other schedules than the one it now names; the first WATCHES_PER_REQUEST of them (a
   * failure, and the rest, are left to the reconciler, which ends a watch its rule no longer has).
   */
  private async unwatchSilence(rule: AlertRuleDoc | null, id = rule?._id ?? ""): Promise<void> {
    const scope = rule ? silenceScope(rule) : null;
    if (scope?.all || !this.deps.silences) return;
    try {
      await this.deps.silences.forget(id, (s) => scope !== null && s.jobId === scope.id && s.dag === scope.dag);
    } catch {
      // The reconciler's next passes end them.
    }
  }

  /**
   * Arms the rule's SCHEDULE_SILENT watch, or (a rule on all of the owner's schedules) one per
   * recurring job and scheduled DAG of the owner, the first WATCHES_PER_REQUEST of them (a failure,
   * and the rest, are left to the reconciler, which arms a rule's missing watches).
   */
  private async watchSilence(rule: AlertRuleDoc): Promise<void> {
    const scope = silenceScope(rule);
    if (!scope || !this.deps.silences) return;
    try {
      if (scope.all) {
        await this.deps.silences.watchAll(rule);
        return;
      }
      const watched = await readWatchedSchedule(this.deps.mongo, scope);
      if (watched) await this.deps.silences.watch(rule, watched);
    } catch {
      // The reconciler's next pass (KAIROS_SCHEDULER reconcile period) watches it.
    }
  }
}

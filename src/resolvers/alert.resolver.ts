/** Alert rules (docs/alerts.md): thin resolvers over AlertRules; the alertFired subscription over the bus. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import { canSee } from "../auth/index.js";
import type { AlertFiredEvent, AlertRuleInput } from "../core/index.js";
import type { AlertDeliveryDoc, AlertRuleDoc } from "../domain/index.js";
import { formatDuration } from "../timing/index.js";
import { AlertDelivery, AlertDeliveryConnection, AlertFired, AlertRule, AlertRuleConnection, CreateAlertRuleInput, DateTime, UpdateAlertRuleInput } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { countedStream, eventStream } from "./event-stream.js";
import { mapPage, pageArgs } from "./pagination.js";

export function toAlertRule(r: AlertRuleDoc): AlertRule {
  return {
    id: r._id,
    ownerId: r.ownerId,
    name: r.name,
    on: r.on,
    jobId: r.jobId,
    dagId: r.dagId,
    cluster: r.cluster,
    webhook: { url: r.webhook.url, slack: r.webhook.slack },
    mutedUntil: r.mutedUntil,
    failureRate: r.failureRate ? { window: formatDuration(r.failureRate.windowMs), threshold: r.failureRate.threshold, minRuns: r.failureRate.minRuns } : null,
    queueLateness: r.queueLatenessMs !== null ? formatDuration(r.queueLatenessMs) : null,
    deadline: r.deadlineMs !== null ? formatDuration(r.deadlineMs) : null,
    silentFor: r.silentForMs != null ? formatDuration(r.silentForMs) : null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function toAlertDelivery(d: AlertDeliveryDoc): AlertDelivery {
  return {
    id: d._id,
    ruleId: d.ruleId,
    test: d.test,
    events: d.events,
    count: d.count,
    runIds: d.runIds,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode,
    error: d.error,
    createdAt: d.createdAt,
    nextAttemptAt: d.status === "PENDING" ? d.nextAttemptAt : null,
    deliveredAt: d.deliveredAt,
  };
}

/** The input as the service takes it (GraphQL's absent and null fields kept apart for updates). */
function ruleInput(i: CreateAlertRuleInput | UpdateAlertRuleInput): Partial<AlertRuleInput> {
  const out: Partial<AlertRuleInput> = {};
  for (const k of ["name", "on", "jobId", "dagId", "cluster", "webhook", "failureRate", "queueLateness", "deadline", "silentFor"] as const) {
    if (k in i && (i as Record<string, unknown>)[k] !== undefined) (out as Record<string, unknown>)[k] = (i as Record<string, unknown>)[k];
  }
  return out;
}

async function subscribeAlertFired({ args, context }: SubscribeResolverData<unknown, { ruleId?: string | null }, Context>) {
  try {
    const p = requireUser(context);
    const ruleId = args.ruleId ?? null;
    if (ruleId !== null) await context.services.alerts.get(p, ruleId);
    const bus = context.services.alertBus;
    // Counted in the one budget of every event subscription (scope: the events service, as runUpdated's).
    return countedStream(context.services.events, p, () =>
      eventStream<AlertFiredEvent>((push) => bus.subscribe((e) => (canSee(p, e.ownerId) && (ruleId === null || e.ruleId === ruleId) ? push(e) : undefined)), 1_000),
    );
  } catch (e) {
    logRefusal(context, "Subscription.alertFired", e, args as Record<string, unknown>);
    throw toGraphQLError(e) ?? e;
  }
}

@Resolver(() => AlertRule)
export class AlertResolver {
  @Mutation(() => AlertRule, { description: "Makes an alert rule on your jobs and DAGs (administrators: cluster-wide with cluster: true). At most KAIROS_ALERT_MAX_RULES per user." })
  async createAlertRule(@Arg("input", () => CreateAlertRuleInput) input: CreateAlertRuleInput, @Ctx() ctx: Context): Promise<AlertRule> {
    const p = requireUser(ctx);
    return toAlertRule(await ctx.services.alerts.create(p, ruleInput(input) as AlertRuleInput));
  }

  @Query(() => AlertRuleConnection, { description: "Your alert rules, newest first (administrators: a user's with userId, or everyone's with all: true)." })
  async alertRules(
    @Ctx() ctx: Context,
    @Arg("userId", () => ID, { nullable: true }) userId?: string | null,
    @Arg("all", () => Boolean, { nullable: true }) all?: boolean | null,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<AlertRuleConnection> {
    const p = requireUser(ctx);
    return mapPage(await ctx.services.alerts.list(p, { userId: userId ?? null, all: all ?? null }, pageArgs(first, after)), toAlertRule);
  }

  @Query(() => AlertRule, { description: "One of your alert rules; another user's is NOT_FOUND." })
  async alertRule(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<AlertRule> {
    return toAlertRule(await ctx.services.alerts.get(requireUser(ctx), id));
  }

  @Mutation(() => AlertRule, { description: "Changes the fields given of a rule; the rule as a whole is checked again." })
  async updateAlertRule(@Arg("id", () => ID) id: string, @Arg("input", () => UpdateAlertRuleInput) input: UpdateAlertRuleInput, @Ctx() ctx: Context): Promise<AlertRule> {
    return toAlertRule(await ctx.services.alerts.update(requireUser(ctx), id, ruleInput(input)));
  }

  @Mutation(() => Boolean, { description: "Deletes a rule and its alerts not yet delivered; its delivery history stays until it expires (30 days)." })
  async deleteAlertRule(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<boolean> {
    return ctx.services.alerts.delete(requireUser(ctx), id);
  }

  @Mutation(() => AlertRule, { description: "Mutes a rule until `until` (at most 366 days ahead); what happens meanwhile sends nothing, then or later. `until: null` unmutes now." })
  async muteAlertRule(@Arg("id", () => ID) id: string, @Arg("until", () => DateTime, { nullable: true }) until: Date | null, @Ctx() ctx: Context): Promise<AlertRule> {
    return toAlertRule(await ctx.services.alerts.mute(requireUser(ctx), id, until ?? null));
  }

  @Query(() => AlertDeliveryConnection, { description: "A rule's webhook messages, newest first, with their status, attempts and last response code (kept 30 days)." })
  async alertDeliveries(
    @Arg("ruleId", () => ID) ruleId: string,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<AlertDeliveryConnection> {
    return mapPage(await ctx.services.alerts.deliveries(requireUser(ctx), ruleId, pageArgs(first, after)), toAlertDelivery);
  }

  @Mutation(() => AlertDelivery, { description: "Sends a test message to the rule's webhook now (one attempt, signed like every alert) and returns how it went." })
  async testAlertRule(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<AlertDelivery> {
    return toAlertDelivery(await ctx.services.alerts.test(requireUser(ctx), id));
  }

  @Subscription(() => AlertFired, { description: "Each alert message of your rules (administrators: everyone's) as it is made; ruleId: one rule's.", subscribe: subscribeAlertFired })
  alertFired(@Root() e: AlertFiredEvent, @Arg("ruleId", () => ID, { nullable: true }) _ruleId?: string | null): AlertFired {
    return { deliveryId: e.deliveryId, ruleId: e.ruleId, ruleName: e.ruleName, test: e.test, events: e.events, count: e.count, runIds: e.runIds, at: e.at };
  }
}

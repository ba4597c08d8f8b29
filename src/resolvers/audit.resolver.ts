/** Reading the audit trail (auditLog) and checking its hash chain (verifyAuditLog); docs/audit.md. */
import type { GraphQLResolveInfo } from "graphql";
import { Arg, Ctx, Info, Int, Query, Resolver } from "type-graphql";
import { AUDIT_OUTCOME_UNKNOWN, ValidationError, type AuditEntryDoc } from "../domain/index.js";
import { AuditEntry, AuditEntryConnection, AuditLogFilter, AuditVerification } from "../schema/index.js";
import { requireAdmin, requireUser, type Context } from "./context.js";
import { API_ERROR_CODES } from "./errors.js";
import { mapPage, pageArgs } from "./pagination.js";

function actorText(a: AuditEntryDoc["actor"]): string {
  if (a.apiKeyId) return `apikey:${a.apiKeyId} (${a.username ?? a.userId ?? "?"})`;
  if (a.username) return `user:${a.username}`;
  if (a.userId) return `user:${a.userId}`;
  return "anonymous";
}

/**
 * Every outcome an entry can have: OK, UNKNOWN (its API instance stopped before the end,
 * AUDIT_OUTCOME_UNKNOWN) and the codes a mutation's error carries (docs/api-errors.md).
 */
export const AUDIT_OUTCOMES = ["OK", AUDIT_OUTCOME_UNKNOWN, ...API_ERROR_CODES] as const;

/** A filter naming no mutation of the schema, an outcome no entry can have, or an empty time range, can only be a mistake: say so. */
function checkFilter(filter: AuditLogFilter | null | undefined, info: GraphQLResolveInfo): void {
  const mutations = info.schema.getMutationType()?.getFields() ?? {};
  for (const action of filter?.actions ?? []) {
    if (!(action in mutations)) throw new ValidationError("filter.actions", `"${action}" is not a mutation of this API (e.g. createJob, updateJob, deleteJob)`);
  }
  const outcome = filter?.outcome;
  if (outcome != null && !(AUDIT_OUTCOMES as readonly string[]).includes(outcome)) {
    throw new ValidationError("filter.outcome", `"${outcome.slice(0, 40)}" is not an outcome of a call; allowed: ${AUDIT_OUTCOMES.join(", ")}`);
  }
  if (filter?.from && filter.to && filter.from.getTime() >= filter.to.getTime()) {
    throw new ValidationError("filter.to", `must be after filter.from (${filter.from.toISOString()}), got ${filter.to.toISOString()}`);
  }
}

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

export function toAuditEntry(d: AuditEntryDoc): AuditEntry {
  return {
    id: d._id,
    seq: d.seq,
    action: d.action,
    actor: actorText(d.actor),
    actorUserId: d.actor.userId,
    actorUsername: d.actor.username,
    actorRole: d.actor.role,
    actorApiKeyId: d.actor.apiKeyId,
    at: d.at,
    address: d.address,
    targetIds: d.targetIds,
    outcome: d.outcome,
    error: d.error,
    args: parsed(d.args),
    before: parsed(d.before),
    after: parsed(d.after),
    prevHash: d.prevHash,
    hash: d.hash,
    keyId: d.keyId ?? null,
  };
}

@Resolver(() => AuditEntry)
export class AuditResolver {
  @Query(() => AuditEntryConnection, {
    description:
      "The audit trail of mutations, newest first: administrators see every entry, a user the calls they made (a login included). " +
      "Entries older than KAIROS_AUDIT_RETENTION (default P365D) are removed.",
  })
  async auditLog(
    @Ctx() ctx: Context,
    @Info() info: GraphQLResolveInfo,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
    @Arg("filter", () => AuditLogFilter, { nullable: true }) filter?: AuditLogFilter | null,
  ) {
    const p = requireUser(ctx);
    checkFilter(filter, info);
    const page = await ctx.services.audit.list(
      p,
      {
        actorUserId: filter?.actorUserId ?? null,
        apiKeyId: filter?.actorApiKeyId ?? null,
        actions: filter?.actions ?? null,
        targetId: filter?.targetId ?? null,
        outcome: filter?.outcome ?? null,
        from: filter?.from ?? null,
        to: filter?.to ?? null,
      },
      pageArgs(first, after),
    );
    return mapPage(page, toAuditEntry);
  }

  @Query(() => AuditVerification, {
    description:
      "Checks the audit trail's hash chain from its anchor (the last entry retention removed) to its head, and names the first broken link: " +
      "an entry altered, removed or inserted. Administrators only; reads every entry.",
  })
  async verifyAuditLog(@Ctx() ctx: Context): Promise<AuditVerification> {
    requireAdmin(ctx);
    return ctx.services.audit.verify();
  }
}

/**
 * The audit trail's before-images: for the mutations that change one document, how to read that
 * document as the API shows it, so the entry carries what changed (src/core/audit: only the
 * fields that differ for an update, the whole document for a delete). Every other mutation is
 * recorded all the same (./audit-trail.ts), with its arguments, ids and result.
 *
 * Each reader reads as the caller (a document they may not see is not read) and outside the
 * request's lookups, so the mutation's own reads are not served from this one.
 */
import type { Context } from "./context.js";
import { requireUser } from "./context.js";
import { toAlertRule } from "./alert.resolver.js";
import { toArtifact } from "./artifact.resolver.js";
import { toDag, toDagRun } from "./dag-mappers.js";
import { toApiKey, toJob, toRun, toUser } from "./mappers.js";
import { visible } from "../auth/index.js";

type Args = Record<string, unknown>;

export interface AuditSubject {
  /** The document before the call, as the API would return it. */
  read(ctx: Context, args: Args): Promise<unknown>;
  /** The call deletes it: nothing after. */
  deletes?: boolean;
}

const idArg = (args: Args, name: string): string => {
  const v = args[name];
  if (typeof v !== "string") throw new Error(`no ${name} argument`);
  return v;
};

// The whole job, its spec's text included (the request's lookups may leave the text out).
const job = (deletes = false): AuditSubject => ({ read: async (ctx, a) => toJob(await ctx.services.jobs.getFor(requireUser(ctx), idArg(a, "id"))), deletes });
const dag = (deletes = false): AuditSubject => ({ read: async (ctx, a) => toDag(await ctx.services.dags.get(requireUser(ctx), idArg(a, "id"))), deletes });
const run: AuditSubject = {
  read: async (ctx, a) => {
    const lookups = ctx.services.lookups.forRequest();
    return toRun(await lookups.run(requireUser(ctx), idArg(a, "id")), lookups.now());
  },
};
const dagRun: AuditSubject = { read: async (ctx, a) => toDagRun(await ctx.services.dagRuns.getRunSummary(requireUser(ctx), idArg(a, "id"))) };
const user = (deletes = false): AuditSubject => ({
  read: async (ctx, a) => {
    requireUser(ctx);
    const [doc] = await ctx.services.users.byIds([idArg(a, "userId")]);
    return doc ? toUser(doc) : undefined;
  },
  deletes,
});
const apiKey: AuditSubject = { read: async (ctx, a) => toApiKey(visible(requireUser(ctx), "API key", idArg(a, "id"), await ctx.services.apiKeys.get(idArg(a, "id")))) };
const alertRule = (deletes = false): AuditSubject => ({ read: async (ctx, a) => toAlertRule(await ctx.services.alerts.get(requireUser(ctx), idArg(a, "id"))), deletes });
const artifact = (deletes = false): AuditSubject => ({ read: async (ctx, a) => toArtifact(await ctx.services.artifacts.get(requireUser(ctx), idArg(a, "id"))), deletes });

/** By mutation name; test/api/audit-coverage.test.ts checks every name is a mutation of the schema. */
export const AUDIT_SUBJECTS: Readonly<Record<string, AuditSubject>> = {
  updateJob: job(),
  pauseJob: job(),
  resumeJob: job(),
  rescheduleJob: job(),
  deleteJob: job(true),
  updateDag: dag(),
  pauseDag: dag(),
  resumeDag: dag(),
  deleteDag: dag(true),
  cancelRun: run,
  retryRun: run,
  cancelDagRun: dagRun,
  retryDagRun: dagRun,
  disableUser: user(),
  enableUser: user(),
  setUserConcurrencyLimit: user(),
  revokeTokens: user(),
  deleteUser: user(true),
  revokeApiKey: apiKey,
  completeArtifactUpload: artifact(),
  deleteArtifact: artifact(true),
  updateAlertRule: alertRule(),
  muteAlertRule: alertRule(),
  deleteAlertRule: alertRule(true),
};

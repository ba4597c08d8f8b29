/**
 * cancelRuns and retryRuns: cancelRun and retryRun for up to MAX_BULK_RUN_IDS ids in one call,
 * each id done exactly as the one-run mutation does it, its outcome or its error in its own entry.
 */
import type { Caller } from "../auth/index.js";
import type { RunDoc } from "../domain/index.js";
import { PreconditionError, RateLimitedError, ValidationError } from "../domain/index.js";
import type { BulkRunError, BulkRunResult } from "../schema/index.js";
import { takeSubmissions, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { toRun } from "./mappers.js";

/** The most ids one cancelRuns or retryRuns call takes. */
export const MAX_BULK_RUN_IDS = 100;

/** The call's ids, at most MAX_BULK_RUN_IDS (BAD_USER_INPUT over it), without repeats, in their order. */
export function bulkRunIds(ids: readonly string[]): string[] {
  if (ids.length > MAX_BULK_RUN_IDS) {
    throw new ValidationError("ids", `at most ${MAX_BULK_RUN_IDS} ids per call (got ${ids.length}); send the rest in further calls`);
  }
  return [...new Set(ids)];
}

/** What cancelRun does for one id. */
export function cancelOne(ctx: Context, p: Caller, id: string): Promise<RunDoc> {
  return ctx.services.runs.cancel(p, id, `cancelled by ${p.username}`);
}

/**
 * What retryRun does for one id, once its submission is taken. A DAG task's run belongs to its DAG
 * run, which has decided on its end already (its children ran, or were UPSTREAM_FAILED): running it
 * again outside would change nothing there but its result, so it is FAILED_PRECONDITION.
 */
export async function retryOne(ctx: Context, p: Caller, id: string): Promise<RunDoc> {
  const run = await ctx.lookups.run(p, id);
  if (run.dagRunId) {
    throw new PreconditionError(`run ${id} is task ${JSON.stringify(run.taskKey)} of DAG run ${run.dagRunId}; retry it with retryDagRun(id: "${run.dagRunId}"), which re-runs its failed tasks and their children`);
  }
  return ctx.services.runs.retryRun(p, id);
}

/** cancelRuns: every id cancelled as cancelRun would, one after the other. */
export async function cancelRuns(ctx: Context, p: Caller, ids: readonly string[]): Promise<BulkRunResult[]> {
  const out: BulkRunResult[] = [];
  for (const id of bulkRunIds(ids)) out.push(await outcome(ctx, "Mutation.cancelRuns", id, () => cancelOne(ctx, p, id)));
  return out;
}

/**
 * retryRuns: every id retried as retryRun would, one after the other, each taking one submission
 * from the caller's budget first (as retryRun does). Once the budget refuses one, that id and
 * every id after it are answered RATE_LIMITED, untried.
 */
export async function retryRuns(ctx: Context, p: Caller, ids: readonly string[]): Promise<BulkRunResult[]> {
  const unique = bulkRunIds(ids);
  // The runs in one read (a request's lookups batch and keep them), not one read per id.
  await Promise.allSettled(unique.map((id) => ctx.lookups.run(p, id)));
  const out: BulkRunResult[] = [];
  let refused: RateLimitedError | null = null;
  for (const id of unique) {
    if (!refused) {
      try {
        await takeSubmissions(ctx, p, 1, "; retryRuns takes one per run it retries");
      } catch (e) {
        if (!(e instanceof RateLimitedError)) throw e;
        refused = e;
      }
    }
    const r: RateLimitedError | null = refused;
    out.push(await outcome(ctx, "Mutation.retryRuns", id, () => (r ? Promise.reject(r) : retryOne(ctx, p, id))));
  }
  return out;
}

/** One id's entry: the run, or its error as the one-run mutation would have answered it. */
async function outcome(ctx: Context, operation: string, id: string, work: () => Promise<RunDoc>): Promise<BulkRunResult> {
  try {
    return { id, run: toRun(await work(), ctx.lookups.now()), error: null };
  } catch (e) {
    return { id, run: null, error: bulkError(ctx, operation, id, e) };
  }
}

function bulkError(ctx: Context, operation: string, id: string, e: unknown): BulkRunError {
  logRefusal(ctx, operation, e, { id });
  const mapped = toGraphQLError(e);
  if (mapped) return { code: String(mapped.extensions.code), message: mapped.message };
  ctx.log.error({ err: e, field: operation, runId: id }, "resolver failed");
  return { code: "INTERNAL_SERVER_ERROR", message: "Internal server error" };
}

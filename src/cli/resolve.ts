/** A job or DAG named on the command line by its name (the caller's) or its id. */
import {
  CliDagDocument,
  CliDagsDocument,
  CliJobDocument,
  CliJobsDocument,
  type CliDagFieldsFragment,
  type CliDagSummaryFieldsFragment,
  type CliJobFieldsFragment,
  type CliJobsQuery,
  type CliDagsQuery,
  type RunStatus,
} from "../../generated/client/graphql.js";
import { ApiError } from "./client.js";
import type { Ctx } from "./context.js";
import { CliError } from "./errors.js";

const PAGE = 50;

/** Every job the caller owns (an administrator: their own only), newest first. */
export async function listOwnJobs(ctx: Ctx, filter: { name?: string; lastRunStatus?: RunStatus[] } = {}): Promise<CliJobFieldsFragment[]> {
  const api = await ctx.api();
  const me = await ctx.whoami();
  const out: CliJobFieldsFragment[] = [];
  let after: string | null = null;
  for (;;) {
    const page: CliJobsQuery = await api.request(CliJobsDocument, {
      filter: { ...(filter.name ? { name: filter.name } : {}), ...(filter.lastRunStatus ? { lastRunStatus: filter.lastRunStatus } : {}), ...(me.role === "ADMIN" ? { ownerId: me.id } : {}) },
      first: PAGE,
      after,
    });
    out.push(...page.jobs.edges.map((e) => e.node).filter((j) => j.ownerId === me.id));
    if (!page.jobs.pageInfo.hasNextPage) break;
    after = page.jobs.pageInfo.endCursor;
  }
  return out;
}

/** Every DAG the caller owns, without tasks. */
export async function listOwnDags(ctx: Ctx): Promise<CliDagSummaryFieldsFragment[]> {
  const api = await ctx.api();
  const me = await ctx.whoami();
  const out: CliDagSummaryFieldsFragment[] = [];
  let after: string | null = null;
  for (;;) {
    const page: CliDagsQuery = await api.request(CliDagsDocument, { first: PAGE, after });
    out.push(...page.dags.edges.map((e) => e.node).filter((d) => d.ownerId === me.id));
    if (!page.dags.pageInfo.hasNextPage) break;
    after = page.dags.pageInfo.endCursor ?? null;
  }
  return out;
}

const notFound = (e: unknown) => e instanceof ApiError && (e.code === "NOT_FOUND" || e.code === "BAD_USER_INPUT");

/** `NAME|ID` → the job: the caller's job of that name, else the job of that id. */
export async function findJob(ctx: Ctx, ref: string): Promise<CliJobFieldsFragment> {
  // An empty name would filter nothing: it must never stand for "every job" (nor, with one job, for that job).
  if (ref.trim() === "") throw new CliError(`a job is named by its name or its 24-character id, and "${ref}" is empty`);
  const byName = await listOwnJobs(ctx, { name: ref });
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) throw new CliError(`${byName.length} of your jobs are named "${ref}" (${byName.map((j) => j.id).join(", ")}): name one by its id`);
  try {
    return (await (await ctx.api()).request(CliJobDocument, { id: ref })).job;
  } catch (e) {
    if (notFound(e)) throw new CliError(`job "${ref}" not found: no job of yours has that name or id`);
    throw e;
  }
}

export async function findDag(ctx: Ctx, ref: string): Promise<CliDagFieldsFragment> {
  if (ref.trim() === "") throw new CliError(`a DAG is named by its name or its 24-character id, and "${ref}" is empty`);
  const api = await ctx.api();
  const match = (await listOwnDags(ctx)).filter((d) => d.name === ref);
  const id = match[0]?.id ?? ref;
  try {
    return (await api.request(CliDagDocument, { id })).dag;
  } catch (e) {
    if (notFound(e)) throw new CliError(`DAG "${ref}" not found: no DAG of yours has that name or id`);
    throw e;
  }
}

/**
 * `fn`, a call about the run `ref`, with the API's "not found" said as a run of yours that is not
 * there. Only NOT_FOUND (or a refused id): a refusal of another argument (`offset: must be …` for
 * `kairos logs --from`) said `run "…" not found: offset: …`, of a run that is there.
 */
export async function runNotFound<T>(ref: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError && (e.code === "NOT_FOUND" || (e.code === "BAD_USER_INPUT" && (e.field === "id" || e.field === "runId")))) {
      throw new CliError(`run "${ref}" not found: no run of yours has that id${e.code === "BAD_USER_INPUT" ? ` (${e.detail})` : ""}`);
    }
    throw e;
  }
}

import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import { canSee } from "../auth/index.js";
import { indexGraph, planOf, renderGraph, topologicalOrder, type DagInput, type DagPatch, type DagTaskInput as DomainTaskInput } from "../dag/index.js";
import type { DagDoc, DagRunDoc, DagRunSummary } from "../domain/index.js";
import { ValidationError } from "../domain/index.js";
import { FireConnection } from "../schema/index.js";
import { CreateDagInput, Dag, DagConnection, DagRun, DagRunConnection, DagRunEvent, DagRunStatus, DagRunTaskConnection, DagTask, DagTaskInput, GraphFormat, UpdateDagInput } from "../schema/index.js";
import { DateTime, JSONObject } from "../schema/index.js";
import { requireSubmitter, requireUser, takeSubmissions, type Context } from "./context.js";
import { dagRunTaskRows, toDag, toDagRun, toDagTasks, withTaskRuns } from "./dag-mappers.js";
import { readTaskRuns, tasksOf, whole } from "./dag-reads.js";
import { dagStream } from "./dag-stream.js";
import { countedStream } from "./event-stream.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { specIn, retryIn, scheduleIn } from "./job-input.js";
import { toFire } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";
import { DEFAULT_TASK_ROWS, MAX_TASK_ROWS, taskRowCursor, taskRowPage, taskRowsPageSize } from "./task-row-pages.js";

const IDEMPOTENCY_KEY =
  "Makes retries safe: the same key from the same user within 24 h returns the first request's result and changes nothing; " +
  "the same key with different input answers FAILED_PRECONDITION.";

/** Task keys for a message: the first three, then how many more. */
function namedKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, 3).map((k) => JSON.stringify(k)).join(", ");
  return keys.length > 3 ? `${shown} and ${keys.length - 3} more` : shown;
}

function taskIn(t: DagTaskInput): DomainTaskInput {
  return { key: t.key, spec: specIn(t.spec), dependsOn: t.dependsOn, trigger: t.trigger, retry: retryIn(t.retry), priority: t.priority, mapOver: t.mapOver };
}

function dagIn(i: CreateDagInput): DagInput {
  return {
    name: i.name,
    description: i.description,
    tasks: i.tasks.map(taskIn),
    schedule: i.schedule ? scheduleIn(i.schedule) : null,
    misfire: i.misfire,
    overlap: i.overlap,
    catchupWindow: i.catchupWindow,
    maxParallel: i.maxParallel,
    failFast: i.failFast,
    params: i.params,
    paused: i.paused,
  };
}

function dagPatch(i: UpdateDagInput): DagPatch {
  const p: DagPatch = {};
  if (i.name != null) p.name = i.name;
  if (i.description !== undefined) p.description = i.description;
  if (i.tasks != null) p.tasks = i.tasks.map(taskIn);
  if (i.schedule != null) p.schedule = scheduleIn(i.schedule);
  if (i.clearSchedule != null) p.clearSchedule = i.clearSchedule;
  if (i.misfire != null) p.misfire = i.misfire;
  if (i.overlap != null) p.overlap = i.overlap;
  if (i.catchupWindow != null) p.catchupWindow = i.catchupWindow;
  if (i.maxParallel !== undefined) p.maxParallel = i.maxParallel;
  if (i.failFast != null) p.failFast = i.failFast;
  if (i.params !== undefined) p.params = i.params;
  return p;
}

interface DagRunUpdatedArgs {
  dagId?: string | null;
  dagRunId?: string | null;
}

/** Authorises a dagRunUpdated subscription before any event flows: the DAG or DAG run must be the caller's (admins: any). */
async function subscribeDagRunUpdated({ args, context }: SubscribeResolverData<unknown, DagRunUpdatedArgs, Context>) {
  try {
    const p = requireUser(context);
    const { dagId, dagRunId } = args;
    // `!= null`, not truthiness: an empty id is an id that does not exist (NOT_FOUND), not "every DAG run".
    if (dagId != null) await context.services.dags.get(p, dagId);
    if (dagRunId != null) {
      const run = await context.services.dagRuns.getRunSummary(p, dagRunId);
      if (dagId != null && run.dagId !== dagId) {
        throw new ValidationError("dagRunId", `DAG run ${dagRunId} is a run of DAG ${run.dagId}, not of DAG ${dagId}, so no event would match both: give one of them, or both of the same DAG`);
      }
    }
    // Its status first, read once the stream listens: a DAG run that ended before (a fast one, or
    // an old one) answers its end and completes instead of waiting for ever.
    const current = async (): Promise<DagRunEvent> => {
      const r = await context.services.dagRuns.getRunSummary(p, dagRunId!);
      return { dagRunId: r._id, dagId: r.dagId, status: r.status, task: null, at: r.finishedAt ?? r.updatedAt };
    };
    // At most MAX_EVENT_SUBSCRIPTIONS_PER_USER at once: each one decodes every user's run events.
    return countedStream(context.services.events, p, () =>
      dagStream(context.services.events, context.services.dagEvents, { visible: (ownerId) => canSee(p, ownerId), dagId: dagId ?? null, dagRunId: dagRunId ?? null, current }),
    );
  } catch (e) {
    logRefusal(context, "Subscription.dagRunUpdated", e, args as Record<string, unknown>);
    throw toGraphQLError(e) ?? e;
  }
}

@Resolver(() => Dag)
export class DagResolver {
  @Query(() => Dag, { description: "A DAG you own (admins: any)." })
  async dag(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Dag> {
    // Without its tasks (up to ~2 MiB), read only if the query asks for them (tasksOf).
    return toDag(await ctx.services.dags.head(requireUser(ctx), id));
  }

  @Query(() => DagConnection, { description: "Your DAGs, newest first (admins: everyone's)." })
  async dags(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<DagConnection> {
    return mapPage(await ctx.services.dags.list(requireUser(ctx), pageArgs(first, after)), toDag);
  }

  @Mutation(() => Dag, { description: "Every problem of the graph is reported with its path; a task's spec is checked like a job's, its messages prefixed by the task's key." })
  async createDag(
    @Arg("input", () => CreateDagInput) input: CreateDagInput,
    @Ctx() ctx: Context,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey: string | null | undefined,
  ): Promise<Dag> {
    return toDag(await ctx.services.dags.create(await requireSubmitter(ctx), dagIn(input), { idempotencyKey }));
  }

  @Mutation(() => Dag, { description: "A new version of the DAG; DAG runs in flight keep the version they started with." })
  async updateDag(@Arg("id", () => ID) id: string, @Arg("input", () => UpdateDagInput) input: UpdateDagInput, @Ctx() ctx: Context): Promise<Dag> {
    // New tasks are a new definition, checked as createDag's (up to 1,000 task specs and 20,000
    // edges in a 2 MiB request: ~0.2 s of the API's CPU): one submission, as createDag. Charged
    // one request only, a loop of them took 1,200 a minute, several cores' worth (docs/security.md).
    const p = input.tasks != null ? await requireSubmitter(ctx) : requireUser(ctx);
    return toDag(await ctx.services.dags.update(p, id, dagPatch(input)));
  }

  @Mutation(() => ID, { description: "Deletes the DAG and its schedule; its running DAG runs are cancelled. Returns the id." })
  async deleteDag(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<string> {
    return (await ctx.services.dags.delete(requireUser(ctx), id))._id;
  }

  @Mutation(() => Dag, { description: "Stops the DAG's schedule (manual triggers still run)." })
  async pauseDag(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Dag> {
    return toDag(await ctx.services.dags.pause(requireUser(ctx), id));
  }

  @Mutation(() => Dag, { description: "Slots that fell while paused are recorded SKIPPED_PAUSED, not run." })
  async resumeDag(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Dag> {
    return toDag(await ctx.services.dags.resume(requireUser(ctx), id));
  }

  @Mutation(() => DagRun, {
    description: "Starts a DAG run now; `params` are merged over the DAG's defaults (top-level keys). Takes one submission per task of the DAG (at most the whole budget).",
  })
  async triggerDag(
    @Arg("id", () => ID) id: string,
    @Ctx() ctx: Context,
    @Arg("params", () => JSONObject, { nullable: true }) params?: Record<string, unknown> | null,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey?: string | null,
  ): Promise<DagRun> {
    const p = await requireSubmitter(ctx);
    // A DAG run is as many submissions as its DAG has tasks (one triggerJob call makes one run): a
    // loop of triggers of a 1,000-task DAG must not queue 1,000 times what a job's loop queues.
    // (Asked by the trigger once it read the DAG: one read of a definition of up to 1,000 task specs.)
    return toDagRun(await ctx.services.dagRuns.trigger(p, id, params, { idempotencyKey, admit: (runs, why) => takeSubmissions(ctx, p, runs - 1, why) }));
  }

  @Mutation(() => DagRun, { description: "Cancels a RUNNING DAG run: its running task runs are cancelled, tasks not started become CANCELLED." })
  async cancelDagRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<DagRun> {
    return toDagRun(await ctx.services.dagRuns.cancelRun(requireUser(ctx), id));
  }

  @Mutation(() => DagRun, {
    description: "Re-runs a FAILED or CANCELLED DAG run's failed, upstream-failed, cancelled and skipped tasks as new attempts; succeeded ones keep their results. Takes one submission per task it re-runs (at most the whole budget).",
  })
  async retryDagRun(
    @Arg("id", () => ID) id: string,
    @Ctx() ctx: Context,
    @Arg("fromFailed", () => Boolean, { defaultValue: true }) fromFailed: boolean,
  ): Promise<DagRun> {
    const p = await requireSubmitter(ctx);
    // A retry makes a run for each task it re-runs, as a trigger does: one submission per task.
    // Charged nothing, a loop of cancelDagRun and retryDagRun queued a DAG's tasks again and again
    // (docs/security.md, "DAG workflows"). Another user's DAG run is NOT_FOUND before any charge but the first.
    return toDagRun(await ctx.services.dagRuns.retryRun(p, id, fromFailed, { admit: (runs, why) => takeSubmissions(ctx, p, runs - 1, why) }));
  }

  @Mutation(() => [DagRun], {
    description:
      "Creates DAG runs for the schedule's slots in a past range (at most 1000 task runs: slots × the most task runs a DAG run can make, a mapped task counting 1000; slots that have one are not repeated). Takes one submission per task of each DAG run (at most the whole budget).",
  })
  async backfillDag(
    @Arg("id", () => ID) id: string,
    @Arg("from", () => DateTime) from: Date,
    @Arg("to", () => DateTime) to: Date,
    @Ctx() ctx: Context,
  ): Promise<DagRun[]> {
    const p = await requireSubmitter(ctx);
    // As triggerDag: one submission per task of each DAG run it makes (at most a whole window's budget).
    return (await ctx.services.dagRuns.backfill(p, id, from.getTime(), to.getTime(), { admit: (runs, why) => takeSubmissions(ctx, p, runs - 1, why) })).map(toDagRun);
  }

  @FieldResolver(() => [DagTask])
  async tasks(@Root() dag: Dag, @Ctx() ctx: Context): Promise<DagTask[]> {
    return dag.tasks ?? toDagTasks(await tasksOf(ctx, dag));
  }

  @FieldResolver(() => [String], {
    description: "Problems that keep some of the DAG's tasks from running, as of now (e.g. a pool no executor serves), each naming its tasks. Empty when all is well. Costs as much as the DAG's tasks.",
  })
  async warnings(@Root() dag: Dag, @Ctx() ctx: Context): Promise<string[]> {
    const byWarning = new Map<string, string[]>();
    for (const task of await tasksOf(ctx, dag)) {
      for (const w of await ctx.services.pools.warnings(task)) {
        const keys = byWarning.get(w);
        if (keys) keys.push(task.key);
        else byWarning.set(w, [task.key]);
      }
    }
    return [...byWarning].map(([w, keys]) => `${keys.length === 1 ? "task" : "tasks"} ${namedKeys(keys)}: ${w}`);
  }

  @FieldResolver(() => [String], { description: "The task keys in an order that respects every dependency (ties: declaration order)." })
  async topologicalOrder(@Root() dag: Dag, @Ctx() ctx: Context): Promise<string[]> {
    return topologicalOrder(indexGraph(planOf(await tasksOf(ctx, dag))));
  }

  @FieldResolver(() => String, { description: "The graph as text: a Mermaid flowchart or Graphviz DOT." })
  async graph(@Root() dag: Dag, @Ctx() ctx: Context, @Arg("format", () => GraphFormat, { defaultValue: "MERMAID" }) format: GraphFormat): Promise<string> {
    return renderGraph(planOf(await tasksOf(ctx, dag)), format);
  }

  @FieldResolver(() => FireConnection, { description: "A scheduled DAG's fire ledger: one outcome per schedule slot, newest first (runId: the DAG run)." })
  async fires(
    @Root() dag: Dag,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<FireConnection> {
    return mapPage(await ctx.services.jobs.fires(dag.id, pageArgs(first, after)), toFire);
  }

  @FieldResolver(() => DateTime, { nullable: true, description: "When the schedule fires next; null when it has no schedule or is paused." })
  async nextFireAt(@Root() dag: Dag, @Ctx() ctx: Context): Promise<Date | null> {
    return (dag.doc as DagDoc).schedule ? ctx.services.dags.nextFireAt(dag.id) : null;
  }

  @FieldResolver(() => DagRunConnection, { description: "This DAG's runs, newest first." })
  async runs(
    @Root() dag: Dag,
    @Ctx() ctx: Context,
    @Arg("status", () => DagRunStatus, { nullable: true }) status?: DagRunStatus | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<DagRunConnection> {
    return mapPage(await ctx.services.dagRuns.listRuns(requireUser(ctx), dag.id, status ?? null, pageArgs(first, after)), toDagRun);
  }
}

@Resolver(() => DagRun)
export class DagRunResolver {
  @Query(() => DagRun, { description: "A DAG run of yours (admins: any)." })
  async dagRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<DagRun> {
    return toDagRun(await ctx.services.dagRuns.getRunSummary(requireUser(ctx), id));
  }

  @Query(() => DagRunConnection, { description: "DAG runs, newest first: of one DAG, or (no dagId) all of yours." })
  async dagRuns(
    @Ctx() ctx: Context,
    @Arg("dagId", () => ID, { nullable: true }) dagId?: string | null,
    @Arg("status", () => DagRunStatus, { nullable: true }) status?: DagRunStatus | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<DagRunConnection> {
    return mapPage(await ctx.services.dagRuns.listRuns(requireUser(ctx), dagId ?? null, status ?? null, pageArgs(first, after)), toDagRun);
  }

  @FieldResolver(() => DagRunTaskConnection, {
    description:
      `Every task in definition order; a mapped task is followed by its instances. A page of \`first\` rows (1–${MAX_TASK_ROWS}, default ${DEFAULT_TASK_ROWS}) ` +
      "after the row `after` names (pageInfo.endCursor, or an edge's cursor): a cursor names a task row, so instances that appear meanwhile do not shift the pages.",
  })
  async tasks(
    @Root() run: DagRun,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { defaultValue: DEFAULT_TASK_ROWS }) first: number,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<DagRunTaskConnection> {
    requireUser(ctx);
    const size = taskRowsPageSize(first);
    // dagRun's, a listing's and a write's answers come without the definition and task states:
    // read the states and, of the definition, only the task keys (not its task specs, up to
    // ~2 MiB: a page of 100 DAG runs asking for one row each read 100 definitions whole).
    const doc = run.doc as DagRunSummary;
    const full = doc.definition && doc.tasks ? (doc as DagRunDoc) : await ctx.services.dagRuns.getRunRows(requireUser(ctx), doc._id);
    // The rows of the page as stored (which rows, and their runs' fire keys, do not depend on the
    // runs), then only those rows' runs, read whole, and the rows again with their runs' states.
    // Not every task run of the DAG run (every attempt): 20 aliases of tasks(first: 1), a query of
    // cost ~60, read a 1,000-task DAG run's 1,000 runs 20 times, ~0.6 s of the API's CPU.
    const rows = dagRunTaskRows(full, []);
    const { start, end, hasNextPage } = taskRowPage(rows, size, after);
    const runs = await readTaskRuns(ctx, rows.slice(start, end).flatMap((r) => (r.fireKey === null ? [] : [r.fireKey])));
    const tasks = withTaskRuns(dagRunTaskRows(full, runs).slice(start, end), runs, ctx.lookups.now());
    const edges = tasks.map((t) => ({ cursor: taskRowCursor(t), node: t }));
    return { edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @FieldResolver(() => String, { description: "The DAG run's graph, coloured by its tasks' states." })
  async graph(@Root() run: DagRun, @Ctx() ctx: Context, @Arg("format", () => GraphFormat, { defaultValue: "MERMAID" }) format: GraphFormat): Promise<string> {
    const full = await whole(ctx, run);
    const states = Object.fromEntries(Object.entries(full.tasks).map(([k, v]) => [k, v.state]));
    return renderGraph(planOf(full.definition.tasks), format, states);
  }

  @Subscription(() => DagRunEvent, {
    description:
      "Every task transition of one DAG run, of a DAG's runs, or (no arguments) of all your DAG runs; and each DAG run's end. With dagRunId it starts with the DAG run's status as it is (task: null) and completes after its end, at once if it had ended.",
    subscribe: subscribeDagRunUpdated,
  })
  dagRunUpdated(
    @Root() event: DagRunEvent,
    @Arg("dagId", () => ID, { nullable: true }) _dagId?: string | null,
    @Arg("dagRunId", () => ID, { nullable: true }) _dagRunId?: string | null,
  ): DagRunEvent {
    return event;
  }
}

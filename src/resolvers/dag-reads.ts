/**
 * What the DAG resolvers read for one request beyond the document they were given: a DAG's tasks
 * (a listing reads DAGs without them), a DAG run whole, and task runs with their results within a
 * budget per request. Each is kept per request (its context), so aliases read once.
 */
import type { DagDoc, DagRunDoc, DagRunSummary, RunDoc } from "../domain/index.js";
import { dagDefinitionId, ValidationError } from "../domain/index.js";
import type { Dag, DagRun } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";

/**
 * Most bytes of task results (up to 64 KiB each) one request reads through `DagRun.tasks`: the
 * typed client's page of 500 rows of full results fits. The query cost counts a result as one
 * value, so without it 20 aliases of `dagRun(id) { tasks(first: 300) { result } }` (cost ~6,000)
 * answered 390 MB (14 s of the API's CPU, 1.2 GB more memory), and a cost of 10,000 more than
 * V8's longest string.
 */
export const MAX_RESULT_BYTES_PER_REQUEST = 32 * 1024 * 1024;
/** Task runs read at once by `DagRun.tasks` (at most 16 MiB of results), so a request stops reading soon after its bound. */
const TASK_RUN_READ_CHUNK = 256;

/** Result bytes read so far by each request (its context), and its reads in turn (so the bound holds across aliases). */
const resultReads = new WeakMap<object, { bytes: number; queue: Promise<unknown> }>();

/**
 * The task runs with these fire keys, whole (with their results), counted against the request's
 * MAX_RESULT_BYTES_PER_REQUEST: read in chunks, one `tasks` field of the request after the other;
 * a page that takes the request past the bound is refused (BAD_USER_INPUT on `first`).
 */
export function readTaskRuns(ctx: Context, fireKeys: readonly string[]): Promise<RunDoc[]> {
  let state = resultReads.get(ctx);
  if (!state) resultReads.set(ctx, (state = { bytes: 0, queue: Promise.resolve() }));
  const s = state;
  const over = () =>
    new ValidationError(
      "first",
      `the task rows asked for in this request carry more than ${MAX_RESULT_BYTES_PER_REQUEST} bytes (32 MiB) of results; ask for fewer rows (first, then after) or fewer DAG runs' tasks in one request`,
    );
  const turn = s.queue.then(async () => {
    const out: RunDoc[] = [];
    for (let i = 0; i < fireKeys.length; i += TASK_RUN_READ_CHUNK) {
      if (s.bytes > MAX_RESULT_BYTES_PER_REQUEST) throw over();
      const runs = await ctx.services.dagRuns.taskRuns(fireKeys.slice(i, i + TASK_RUN_READ_CHUNK));
      for (const r of runs) s.bytes += r.resultJson?.length ?? 0;
      out.push(...runs);
    }
    if (s.bytes > MAX_RESULT_BYTES_PER_REQUEST) throw over();
    return out;
  });
  s.queue = turn.catch(() => undefined);
  return turn;
}

/** Each request's DAG tasks read so far, by `<dagId>@<version>` (aliases of one DAG read them once). */
const dagTaskReads = new WeakMap<object, Map<string, Promise<DagDoc["tasks"]>>>();

/**
 * A DAG's tasks: as mapped when it was read whole, else read for the request (the DAG's version's;
 * these fields cost a DAG's size each in the query cost, so a request reads few).
 */
export function tasksOf(ctx: Context, dag: Dag): Promise<DagDoc["tasks"]> {
  const doc = dag.doc as Partial<DagDoc>;
  if (doc.tasks) return Promise.resolve(doc.tasks);
  let reads = dagTaskReads.get(ctx);
  if (!reads) dagTaskReads.set(ctx, (reads = new Map()));
  const key = dagDefinitionId(dag.id, dag.version);
  let read = reads.get(key);
  if (!read) reads.set(key, (read = ctx.services.dags.tasksAt(dag.id, dag.version)));
  return read;
}

/** The DAG run whole (definition and task states): the one the answer holds, else read (the caller's, or NOT_FOUND). */
export async function whole(ctx: Context, run: DagRun): Promise<DagRunDoc> {
  const doc = run.doc as DagRunSummary;
  return doc.definition && doc.tasks ? (doc as DagRunDoc) : ctx.services.dagRuns.getRun(requireUser(ctx), doc._id);
}

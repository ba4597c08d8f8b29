/**
 * The cost model of an operation, for graphql-query-complexity: roughly how many values the
 * server has to produce for it.
 *
 * - Every field costs 1 plus what is selected below it.
 * - A field with a `first`, `count` or `limit` argument (connections, `nextFires`, a run's `logs`) returns that many
 *   items: what is below it is paid that many times, `1 + n × below`. Without the argument, the
 *   resolver's default page (`first`: 20) or the argument's schema default (`count: 5`) counts.
 * - A list of objects without such an argument (a backfill's `runs`, `backfillDag`) is
 *   charged as {@link ASSUMED_LIST_SIZE} items — except a connection's `edges`, which the
 *   connection's own `first` has paid for already, and a list its parent's `count` sizes
 *   ({@link SIZED_BY_PARENT}: `previewSchedule(count)`'s `nextFires`), which that count pays for.
 * - A list field taking `ids` (`cancelRuns`, `retryRuns`) returns one item per id: what is below
 *   it is paid that many times.
 * - A field whose size is a DAG's, which no argument bounds ({@link DAG_SIZED}: a DAG's `tasks`,
 *   `topologicalOrder` and `graph`, a DAG run's `graph`), costs MAX_DAG_TASKS more (a DAG's size,
 *   counted once, not per field selected below it): `dags(first: 20) { edges { node { graph } } }`
 *   would otherwise render twenty graphs of hundreds of thousands of edges each (a 2 MiB
 *   definition) for a cost of about 60. One DAG's whole definition and graph stay well within it.
 * - A list with a small fixed bound ({@link BOUNDED_LISTS}: `Run.waiting`, `Job.problems`) is charged as that many items.
 * - A JSON field of up to 64 KiB ({@link KIB_SIZED}: params) costs 64 more, one per KiB.
 * - A field whose work no argument bounds and is large by nature ({@link FIXED_COST}: `forecast`,
 *   up to 10,000 jobs and 2,000,000 fires enumerated) costs that much more: with the default
 *   KAIROS_MAX_COST (10,000) a request holds at most two of them (20 aliases made one request
 *   compute 20 forecasts).
 * - Introspection fields cost nothing: the schema is fixed and small, and introspection is off
 *   outside dev.
 *
 * So `jobs(first: 100) { edges { node { runs(first: 100) { edges { node { id } } } } } }` costs
 * 1 + 100 × (2 + (1 + 100 × 3)) = 30,301, and `nextFires(count: 100) { at }` 101.
 */
import { getNullableType, isListType, type GraphQLSchema, type DocumentNode } from "graphql";
import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import { DEFAULT_LOG_READ_CHUNKS } from "../core/index.js";
import { MAX_DAG_TASKS, MAX_PARAMS_BYTES } from "../dag/index.js";
import { DEFAULT_PAGE } from "../resolvers/index.js";

/** What a list of objects without a size argument is charged as. */
export const ASSUMED_LIST_SIZE = 20;

/** Fields (`Type.field`) as large as a DAG: up to MAX_DAG_TASKS tasks, or a graph of them. */
export const DAG_SIZED: ReadonlySet<string> = new Set(["Dag.tasks", "Dag.topologicalOrder", "Dag.graph", "Dag.warnings", "DagRun.graph"]);

/**
 * JSON fields of up to 64 KiB ({@link MAX_PARAMS_BYTES}: a DAG's default params, a DAG run's
 * params), which cost one more per KiB they may hold: counted as one value, 20 aliases of
 * `dagRuns(first: 100) { edges { node { params } } }` (cost ~4,000, over 118 DAG runs of 64 KiB
 * params, one submission each) answered 130 MB (3.3 s of the API's CPU, 0.5 GB more memory). A
 * page of 100 DAG runs with their params still reads whole (~6,600).
 */
export const KIB_SIZED: ReadonlySet<string> = new Set(["Dag.params", "DagRun.params"]);
const KIB_SIZED_COST = Math.ceil(MAX_PARAMS_BYTES / 1024);

/** Lists (`Type.field`) whose size is their parent field's `count`, which multiplies what is below it already. */
export const SIZED_BY_PARENT: ReadonlySet<string> = new Set(["SchedulePreview.nextFires"]);

/**
 * Lists with a small fixed bound (the wait reasons: docs/waiting.md), charged as that many items
 * rather than ASSUMED_LIST_SIZE, so a page of 100 runs with their `waiting` stays affordable.
 */
export const BOUNDED_LISTS: ReadonlyMap<string, number> = new Map([
  ["Run.waiting", 4],
  ["DagRunTask.waiting", 4],
  ["Job.problems", 10],
]);

/** What a `forecast` costs on top of its selection: two fit under the default KAIROS_MAX_COST, three do not. */
export const FORECAST_COST = 4_000;

/** Fields (`Type.field`) charged a fixed cost on top of what is selected below them. */
export const FIXED_COST: ReadonlyMap<string, number> = new Map([["Query.forecast", FORECAST_COST]]);

/** Past this many fields and fragments the analysis itself stops (the document is refused). */
const MAX_QUERY_NODES = 10_000;

function listSize(args: Record<string, unknown>, hasSizeArg: boolean, dflt: number): number | null {
  if (!hasSizeArg) return null;
  const n = args.first ?? args.count ?? args.limit;
  return typeof n === "number" && Number.isFinite(n) ? Math.max(0, n) : dflt;
}

export const kairosCostEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (type.name.startsWith("__") || field.name.startsWith("__")) return 0;
  if (DAG_SIZED.has(`${type.name}.${field.name}`)) return 1 + MAX_DAG_TASKS + childComplexity;
  if (KIB_SIZED.has(`${type.name}.${field.name}`)) return 1 + KIB_SIZED_COST + childComplexity;
  const fixed = FIXED_COST.get(`${type.name}.${field.name}`);
  if (fixed !== undefined) return 1 + fixed + childComplexity;
  if (SIZED_BY_PARENT.has(`${type.name}.${field.name}`)) return 1 + childComplexity;
  const bound = BOUNDED_LISTS.get(`${type.name}.${field.name}`);
  if (bound !== undefined) return 1 + bound * childComplexity;
  if (field.args.some((a) => a.name === "ids") && isListType(getNullableType(field.type))) {
    return 1 + (Array.isArray(args.ids) ? args.ids.length : ASSUMED_LIST_SIZE) * Math.max(1, childComplexity);
  }
  const hasSizeArg = field.args.some((a) => a.name === "first" || a.name === "count" || a.name === "limit");
  // `limit` (a run's `logs`): its default page is the log reader's.
  const sized = listSize(args, hasSizeArg, field.args.some((a) => a.name === "limit") ? DEFAULT_LOG_READ_CHUNKS : DEFAULT_PAGE);
  if (sized !== null) return 1 + sized * Math.max(1, childComplexity);
  const unsizedList = childComplexity > 0 && isListType(getNullableType(field.type)) && !type.name.endsWith("Connection");
  if (unsizedList) return 1 + ASSUMED_LIST_SIZE * childComplexity;
  return 1 + childComplexity;
};

/**
 * The cost of the operation `operationName` of a document that passed validation. Throws when
 * the variables cannot be coerced (execution would refuse them anyway) or the document has more
 * than MAX_QUERY_NODES nodes.
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName?: string | null): number {
  return getComplexity({
    schema,
    query: document,
    variables: variables ?? {},
    operationName: operationName ?? undefined,
    estimators: [kairosCostEstimator],
    maxQueryNodes: MAX_QUERY_NODES,
  });
}

/**
 * What every Int the API takes allows, by schema coordinate (`Query.jobs(first:)`,
 * `CreateJobInput.priority`): what a value that is no 32-bit integer at all (`1.5`, `1e10`,
 * `"abc"`, `99999999999`) is told, naming its field, before any resolver runs
 * (api/scalar-inputs.ts). The bounds are the ones the resolvers and services check, taken from where
 * they are checked; a value that is an Int but out of its range is refused there, by the same
 * numbers. test/api/int-inputs.test.ts holds every Int argument and input field of the schema to
 * having an entry here.
 */
import { MAX_CONCURRENT_RUNS_LIMIT, MAX_HOTSPOT_MIN_RUNS, MAX_LOG_READ_CHUNKS, MAX_PRIORITY, MAX_RATE_MIN_RUNS, RESOURCE_BOUNDS } from "../core/index.js";
import { MAX_PARALLEL } from "../dag/index.js";
import { MAX_ATTEMPTS, MAX_EXIT_CODE } from "../timing/index.js";
import { MAX_FIRE_COUNT } from "./job.resolver.js";
import { MAX_PAGE } from "./pagination.js";
import { MAX_TASK_ROWS } from "./task-row-pages.js";

/** GraphQL's Int: a 32-bit signed integer. */
export const INT_MAX = 2_147_483_647;
export const INT_MIN = -2_147_483_648;

export interface IntRange {
  min: number;
  /** A number, or the setting that bounds it (`KAIROS_ARTIFACT_MAX_BYTES`). */
  max: number | string;
  /** What the number counts, after the range: `MiB`, `bytes`, `chunks`. */
  unit?: string;
  /** What else is allowed: `or null for no limit`. */
  or?: string;
}

const page: IntRange = { min: 1, max: MAX_PAGE };
const priority: IntRange = { min: 0, max: MAX_PRIORITY };
const maxParallel: IntRange = { min: 1, max: MAX_PARALLEL };
const fireCount: IntRange = { min: 1, max: MAX_FIRE_COUNT };
const logToken: IntRange = { min: 1, max: INT_MAX };
const byteOffset: IntRange = { min: 0, max: INT_MAX, unit: "bytes" };
const concurrency: IntRange = { min: 1, max: MAX_CONCURRENT_RUNS_LIMIT, or: "or null for no limit" };
const resource = (key: "memoryMb" | "pids" | "diskMb"): IntRange => ({ min: RESOURCE_BOUNDS[key].min, max: RESOURCE_BOUNDS[key].max, unit: RESOURCE_BOUNDS[key].unit });

export const INT_RANGES: Readonly<Record<string, IntRange>> = {
  "Query.alertDeliveries(first:)": page,
  "Query.alertRules(first:)": page,
  "Query.apiKeys(first:)": page,
  "Query.artifacts(first:)": page,
  "Query.auditLog(first:)": page,
  "Query.dagRuns(first:)": page,
  "Query.dags(first:)": page,
  "Query.deadLetters(first:)": page,
  "Query.jobs(first:)": page,
  "Query.nodes(first:)": page,
  "Query.resources(first:)": page,
  "Query.runs(first:)": page,
  "Query.upcomingFires(first:)": page,
  "Query.users(first:)": page,
  "Query.loginLockouts(first:)": page,
  "Query.forecast(hotspotMinRuns:)": { min: 1, max: MAX_HOTSPOT_MIN_RUNS },
  "Query.previewSchedule(count:)": fireCount,
  "ClusterStats.nodes(first:)": page,
  "Dag.fires(first:)": page,
  "Dag.runs(first:)": page,
  "Job.fires(first:)": page,
  "Job.runs(first:)": page,
  "Job.nextFires(count:)": fireCount,
  "DagRun.tasks(first:)": { min: 1, max: MAX_TASK_ROWS },
  "Run.logs(limit:)": { min: 1, max: MAX_LOG_READ_CHUNKS, unit: "chunks" },
  "Run.logs(offset:)": byteOffset,
  "Run.logs(token:)": logToken,
  "Run.logStatus(token:)": logToken,
  "Run.logUrl(token:)": logToken,
  "Subscription.runLogs(fromOffset:)": byteOffset,
  "Subscription.runLogs(token:)": logToken,
  "Mutation.createArtifactUpload(size:)": { min: 1, max: "KAIROS_ARTIFACT_MAX_BYTES", unit: "bytes" },
  "Mutation.createUser(maxConcurrentRuns:)": concurrency,
  "Mutation.setUserConcurrencyLimit(maxConcurrentRuns:)": concurrency,
  "CreateJobInput.priority": priority,
  "UpdateJobInput.priority": priority,
  "DagTaskInput.priority": priority,
  "CreateDagInput.maxParallel": maxParallel,
  "UpdateDagInput.maxParallel": maxParallel,
  "FailureRateInput.minRuns": { min: 1, max: MAX_RATE_MIN_RUNS },
  "ResourcesInput.memoryMb": resource("memoryMb"),
  "ResourcesInput.pids": resource("pids"),
  "ResourcesInput.diskMb": resource("diskMb"),
  "RetryInput.maxAttempts": { min: 1, max: MAX_ATTEMPTS },
  "RetryInput.nonRetryableExitCodes": { min: 0, max: MAX_EXIT_CODE },
  "ScheduleInput.maxFires": { min: 1, max: INT_MAX, or: "or null for no limit" },
};

/** An Int the table does not know (a new argument: the test says which) still says what Int allows. */
const ANY_INT: IntRange = { min: INT_MIN, max: INT_MAX };

/** What the Int at `coordinate` allows: `an integer from 1 to 100`, `an integer from 16 to 4194304 MiB`. */
export function intRangeText(coordinate: string | null): string {
  const r = (coordinate && INT_RANGES[coordinate]) || ANY_INT;
  return `an integer from ${r.min} to ${r.max}${r.unit ? ` ${r.unit}` : ""}${r.or ? `, ${r.or}` : ""}`;
}

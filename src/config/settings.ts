/**
 * What Kairos can be configured with: every setting, the environment variable (and flag) it is
 * read from, and its default. Each role reads the part it needs; src/config/load.ts reads them all.
 */
import type { ResourceRequest } from "../domain/index.js";
import type { LogFormatSetting, LogLevel } from "../support/index.js";
import type { ApiGuardSettings } from "../api/index.js";
import type { LogSettings } from "../core/index.js";
import type { BlobStoreSettings } from "../blobs/index.js";
import type { ArtifactSettings } from "./blobs.js";
import type { AuditSettings } from "../core/index.js";
import type { AlertSettings } from "./alerts.js";
import type { TracingSettings } from "../support/index.js";
import type { RedisTarget } from "../shared-state/index.js";

export const ROLES = ["dev", "api", "scheduler", "executor"] as const;
export type Role = (typeof ROLES)[number];

export interface KairosConfig {
  role: Role;
  /** HTTP/WebSocket port of the API. `KAIROS_PORT`, `--port`. @default 4000 */
  port: number;
  /** Listen address. `KAIROS_HOST`, `--host`. @default 127.0.0.1 in dev, 0.0.0.0 otherwise */
  host: string;
  /** Where `dev` keeps its embedded MongoDB data, JWT secret and run work dirs. `KAIROS_DATA_DIR`. @default ./.kairos */
  dataDir: string;
  /** `MONGO_URL`; unset in `dev` starts the embedded emulator. Required for other roles. */
  mongoUrl: string | null;
  /** `MONGO_DB`. @default kairos */
  mongoDb: string;
  /** `REDIS_URL` when the deployment runs on one Redis server (null with a Cluster or Sentinel). */
  redisUrl: string | null;
  /**
   * The Redis to run on: `REDIS_URL`, `REDIS_CLUSTER_NODES` or `REDIS_SENTINELS` +
   * `REDIS_SENTINEL_NAME` (src/config/redis.ts); null in `dev` without one (in-memory adapters).
   * Required for other roles.
   */
  redis: RedisTarget | null;
  /** `KAIROS_REDIS_PREFIX`. @default kairos */
  redisPrefix: string;
  /** `KAIROS_JWT_SECRET` (at least 32 characters); required outside `dev`, where one is generated and kept in the data dir. */
  jwtSecret: string | null;
  /** `KAIROS_JWT_TTL` as an ISO-8601 duration. @default PT12H */
  jwtTtlMs: number;
  /** `KAIROS_ADMIN_USER`. @default admin */
  adminUser: string;
  /** `KAIROS_ADMIN_PASSWORD`; when unset, a password is generated once and printed. */
  adminPassword: string | null;
  /** `KAIROS_LOG_LEVEL`. @default info */
  logLevel: LogLevel;
  /** `KAIROS_LOG_FORMAT`: json, pretty, or auto (pretty for `dev` on a terminal, JSON otherwise). @default auto */
  logFormat: LogFormatSetting;
  /** Time-wheel shards, fixed per cluster. `KAIROS_SHARDS`. @default 64 */
  shards: number;
  /** Executor: concurrent run slots. `KAIROS_EXECUTOR_SLOTS`. @default 2 × CPUs */
  executorSlots: number;
  /** Executor: pools it pulls from, comma separated. `KAIROS_POOLS`. @default default */
  pools: string[];
  /** Executor: node name. `KAIROS_NODE_NAME`. @default host name */
  nodeName: string;
  /** Run lease: an executor that cannot renew kills its job before this ends. `KAIROS_LEASE`. @default PT30S */
  leaseMs: number;
  /**
   * api, scheduler (dev: both): the most runs one user may have waiting to start (QUEUED, staged
   * and parked included, or PENDING); over it the API refuses (RESOURCE_EXHAUSTED) and the scheduler skips
   * slots (SKIPPED_BACKLOG). `KAIROS_MAX_WAITING_RUNS`, 1 to 100000000 or `off` (null). @default 10000
   */
  maxWaitingRuns: number | null;
  /**
   * Scheduler: how long a scheduler holds a time-wheel shard without renewing it (renewed every
   * 2 s); after a crash, its shards wait this long for a new owner. `KAIROS_SHARD_LEASE`. @default PT15S
   */
  shardLeaseMs: number;
  /**
   * Scheduler: runs of jobs with overlap ALLOW are created and queued up to this long before
   * their due time, so executors start them on the instant. `KAIROS_STAGE_AHEAD`, PT0S (off) to PT5M. @default PT10S
   */
  stageAheadMs: number;
  /** scheduler/executor roles: port of `/healthz`, `/readyz`, `/metrics` (the API serves them itself). `KAIROS_METRICS_PORT`. @default off */
  metricsPort: number | null;
  /** How late a fire may be handled after downtime. `KAIROS_CATCHUP_WINDOW`. @default PT1H */
  catchupWindowMs: number;
  /**
   * Executor: how runs are isolated. `KAIROS_SANDBOX`: `bubblewrap` (the default for the executor
   * role, which refuses to start without it) or `none` (plain processes; never for untrusted
   * users). Unset in `dev`: bubblewrap where it works, else none with a loud warning.
   */
  sandbox: "bubblewrap" | "none" | "auto";
  /**
   * Executor: start sandboxed runs through the launcher, in a sandbox kept per slot (`on`), or
   * with a bubblewrap of their own each (`off`: slower; the launcher's escape hatch).
   * `KAIROS_SANDBOX_LAUNCHER`. @default on
   */
  sandboxLauncher: boolean;
  /** Executor: slot i runs as uid/gid base + i. `KAIROS_SANDBOX_UID_BASE`. @default 61000 */
  sandboxUidBase: number;
  /** Executor: extra host paths bound read-only into sandboxes, comma separated. `KAIROS_SANDBOX_RO_PATHS`. */
  sandboxRoPaths: string[];
  /**
   * Executor: host paths bound writable into every sandbox, comma separated: shared by every job
   * of every user on the node (a scratch volume, a test ledger). `KAIROS_SANDBOX_RW_PATHS`.
   */
  sandboxRwPaths: string[];
  /** Executor: CPU cores and memory its runs may reserve in total. `KAIROS_EXECUTOR_CAPACITY` (`cpu=8,memoryMb=16384`). @default 2 × cores, all memory */
  executorCapacity: { cpu: number; memoryMb: number } | null;
  /** Executor: a run's resources when its job leaves them out. `KAIROS_RUN_DEFAULTS`. @default cpu=1,memoryMb=512,pids=256,diskMb=1024 */
  runDefaults: ResourceRequest;
  /** Executor: the most one run may ask for. `KAIROS_RUN_MAX`. @default cpu=cores,memoryMb=all,pids=4096,diskMb=10240 */
  runMax: ResourceRequest | null;
  /**
   * Executor: offer EGRESS network access to runs, from this IPv4 /16 (one per executor per host),
   * never to the denied ranges. `KAIROS_EGRESS_SUBNET`, `KAIROS_EGRESS_DENY` (comma separated CIDRs).
   * @default not offered; deny: every private, link-local, shared and loopback range
   */
  egress: { subnet: string; deny: string[] } | null;
  /**
   * Executor, job kinds (docs/job-kinds.md): the SCRIPT interpreters it offers of those it has
   * (`KAIROS_INTERPRETERS`, default all it has); ranges HTTP jobs may reach although not public
   * (`KAIROS_HTTP_JOB_ALLOWED_CIDRS`, default none) and more they may not (`KAIROS_HTTP_JOB_DENIED_CIDRS`).
   */
  jobKinds: { interpreters: string[] | null; httpAllowedCidrs: string[]; httpDeniedCidrs: string[] };
  /** Run logs: cap per attempt, flush period, archive retention, link lifetime (src/config/logs.ts). */
  logs: LogSettings;
  /** How long the store keeps finished runs (with their history), fire-ledger entries and live log chunks (TTL indexes). */
  retention: { runsMs: number; firesMs: number; logsMs: number };
  /** API role: query limits, request rate limits and login protection (docs/limits.md). */
  api: ApiGuardSettings;
  /**
   * Blob storage for artifacts and archived logs: `S3_BUCKET`, `S3_ENDPOINT`, `S3_PUBLIC_ENDPOINT`,
   * `S3_REGION`, `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY`, `S3_FORCE_PATH_STYLE` (src/config/blobs.ts).
   * Null without S3_BUCKET: `dev` embeds an S3 server; other roles have no artifacts or archived logs.
   */
  s3: BlobStoreSettings | null;
  /** Artifact limits and the executor's artifact cache (src/config/blobs.ts). */
  artifacts: ArtifactSettings;
  /**
   * Tracing: spans exported over OTLP/HTTP to `KAIROS_OTLP_ENDPOINT` (else `OTEL_EXPORTER_OTLP_ENDPOINT`),
   * `KAIROS_TRACE_SAMPLE_RATIO`, `OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS` (src/config/tracing.ts).
   * Null when no endpoint is set: no spans are made. @default null
   */
  tracing: TracingSettings | null;
  /** Alert rules and their webhooks (src/config/alerts.ts; docs/alerts.md). */
  alerts: AlertSettings;
  /** API role: the audit trail of mutations, `KAIROS_AUDIT` (on/off), `KAIROS_AUDIT_RETENTION`, `KAIROS_AUDIT_KEY` and `KAIROS_AUDIT_PREVIOUS_KEYS` (src/config/audit.ts; docs/audit.md). */
  audit: AuditSettings;
}

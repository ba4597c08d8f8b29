/**
 * Typed configuration. The only module that reads `process.env` (through its `env` argument) and
 * command-line flags. Everything is validated at start with an error that names the bad setting
 * and says what is allowed.
 */
import { cpus, hostname } from "node:os";
import { resolve } from "node:path";
import { DEFAULT_RESOURCES, parseResourceSetting } from "./core/resources.js";
import { ConfigError } from "./domain/errors.js";
import { DEFAULT_EGRESS_DENY } from "./executor/sandbox/egress.js";
import type { ResourceRequest } from "./domain/documents.js";
import { LOG_LEVELS, type LogLevel } from "./log.js";

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
  /** `REDIS_URL`; unset in `dev` uses the in-memory adapters. Required for other roles. */
  redisUrl: string | null;
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
  /** API role: query limits, request rate limits and login protection (README "Limits"). */
  api: ApiGuardSettings;
}

/** A budget of `points` per `durationMs`, or null for no limit (`off`). */
export interface Rate {
  points: number;
  durationMs: number;
}

/** Limits a GraphQL operation must pass before any resolver runs (src/api/limits.ts). */
export interface QueryLimitSettings {
  /** Deepest field nesting of an operation. `KAIROS_MAX_DEPTH`. @default 10 */
  maxDepth: number;
  /** Aliased fields in an operation. `KAIROS_MAX_ALIASES`. @default 20 */
  maxAliases: number;
  /** Lexical tokens of a document (checked while parsing). `KAIROS_MAX_TOKENS`. @default 1000 */
  maxTokens: number;
  /** Directives in an operation. `KAIROS_MAX_DIRECTIVES`. @default 20 */
  maxDirectives: number;
  /** Cost of a query or mutation (cost model: src/api/cost.ts). `KAIROS_MAX_COST`. @default 10000 */
  maxCost: number;
  /** Cost of a subscription, paid again for every event. `KAIROS_MAX_SUBSCRIPTION_COST`. @default 1000 */
  maxSubscriptionCost: number;
  /** Schema introspection. `KAIROS_INTROSPECTION`. @default true in dev, false otherwise */
  introspection: boolean;
  /** "Did you mean …" in validation errors. `KAIROS_FIELD_SUGGESTIONS`. @default true in dev, false otherwise */
  fieldSuggestions: boolean;
}

/** Login protection: per user name and per client address (src/api/rate-limit.ts). */
export interface LoginLimitSettings {
  /** Failed logins of one user name before each further one must wait. `KAIROS_LOGIN_FREE_FAILURES`. @default 3 */
  freeFailures: number;
  /** Failed logins of one user name that lock it out. `KAIROS_LOGIN_LOCKOUT_AFTER`. @default 10 */
  lockoutAfter: number;
  /** As freeFailures, per client address. `KAIROS_LOGIN_ADDRESS_FREE_FAILURES`. @default 10 */
  addressFreeFailures: number;
  /** As lockoutAfter, per client address. `KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER`. @default 100 */
  addressLockoutAfter: number;
  /** The first wait; it doubles with each further failure. `KAIROS_LOGIN_DELAY`. @default PT1S */
  delayMs: number;
  /** How long a lockout lasts unless an admin lifts it (unlockLogin). `KAIROS_LOGIN_LOCKOUT`. @default PT15M */
  lockoutMs: number;
  /** Failures older than this are forgotten. `KAIROS_LOGIN_WINDOW`. @default PT1H */
  windowMs: number;
}

export interface ApiGuardSettings {
  query: QueryLimitSettings;
  /** Requests (HTTP) or operations (WebSocket) per user, or per address when anonymous. `KAIROS_RATE_REQUESTS`. @default 1200/PT1M */
  requestRate: Rate | null;
  /**
   * What a document refused by the query limits (or unparsable, or invalid) costs of the caller's
   * request budget, in requests: an abusive client is soon answered with cheap 429s.
   * `KAIROS_RATE_REFUSED_COST`. @default 20
   */
  refusedCost: number;
  /** createJob, triggerJob and backfillJob calls per user. `KAIROS_RATE_SUBMISSIONS`. @default 120/PT1M */
  submissionRate: Rate | null;
  login: LoginLimitSettings;
  /** Largest request body in bytes. `KAIROS_MAX_BODY_BYTES`. @default 1048576 (1 MiB) */
  maxBodyBytes: number;
  /** Proxy hops in front of the API whose X-Forwarded-For is trusted for the client address. `KAIROS_TRUST_PROXY`. @default 0 */
  trustProxyHops: number;
}

type Env = Record<string, string | undefined>;

/** Shard lease bounds: at least three 2 s renewals fit in it; at most 10 minutes of takeover delay. */
function shardLease(raw: string | undefined): number {
  const ms = settingDuration("KAIROS_SHARD_LEASE", raw ?? "PT15S");
  if (ms < 6_000 || ms > 600_000) {
    throw new ConfigError(`KAIROS_SHARD_LEASE: must be from PT6S to PT10M (renewed every 2 s; a crashed scheduler's shards wait this long), got "${raw}"`);
  }
  return ms;
}

/** Stage-ahead bounds: off, up to 5 minutes (a job changed within the window has its staged runs taken back). */
function stageAhead(raw: string | undefined): number {
  if (raw !== undefined && /^(PT0+(\.0+)?S|0)$/.test(raw.trim())) return 0;
  const ms = settingDuration("KAIROS_STAGE_AHEAD", raw === undefined || raw.trim() === "" ? "PT10S" : raw);
  if (ms > 300_000) throw new ConfigError(`KAIROS_STAGE_AHEAD: must be from PT0S (off) to PT5M, got "${raw}"`);
  return ms;
}

function egressSettings(env: Env): KairosConfig["egress"] {
  const subnet = env.KAIROS_EGRESS_SUBNET?.trim();
  if (!subnet) {
    if (env.KAIROS_EGRESS_DENY) throw new ConfigError("KAIROS_EGRESS_DENY: set KAIROS_EGRESS_SUBNET too (EGRESS is offered only with a subnet)");
    return null;
  }
  if (!/^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.test(subnet)) throw new ConfigError(`KAIROS_EGRESS_SUBNET: "${subnet}" is not an IPv4 /16 like 10.231.0.0/16`);
  const deny = env.KAIROS_EGRESS_DENY === undefined ? [...DEFAULT_EGRESS_DENY] : env.KAIROS_EGRESS_DENY.split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of deny) {
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(c)) throw new ConfigError(`KAIROS_EGRESS_DENY: "${c}" is not an IPv4 CIDR like 10.0.0.0/8`);
  }
  return { subnet, deny };
}

function sandboxSettings(dev: boolean, env: Env): Pick<KairosConfig, "sandbox" | "sandboxUidBase" | "sandboxRoPaths" | "sandboxRwPaths" | "executorCapacity" | "runDefaults" | "runMax" | "egress"> {
  const raw = env.KAIROS_SANDBOX?.trim();
  if (raw !== undefined && raw !== "" && raw !== "bubblewrap" && raw !== "none") {
    throw new ConfigError(`KAIROS_SANDBOX: "${raw}" is not one of bubblewrap, none`);
  }
  const sandbox = raw === "bubblewrap" || raw === "none" ? raw : dev ? "auto" : "bubblewrap";
  const paths = (name: string) => {
    const list = (env[name] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    for (const p of list) if (!p.startsWith("/")) throw new ConfigError(`${name}: "${p}" is not an absolute path`);
    return list;
  };
  const roPaths = paths("KAIROS_SANDBOX_RO_PATHS");
  const capacity = env.KAIROS_EXECUTOR_CAPACITY
    ? parseResourceSetting("KAIROS_EXECUTOR_CAPACITY", env.KAIROS_EXECUTOR_CAPACITY, { ...DEFAULT_RESOURCES, cpu: cpus().length * 2, memoryMb: 1 << 20 })
    : null;
  const runDefaults = parseResourceSetting("KAIROS_RUN_DEFAULTS", env.KAIROS_RUN_DEFAULTS, DEFAULT_RESOURCES);
  const runMax = env.KAIROS_RUN_MAX ? parseResourceSetting("KAIROS_RUN_MAX", env.KAIROS_RUN_MAX, { cpu: cpus().length, memoryMb: 1 << 20, pids: 4096, diskMb: 10_240 }) : null;
  if (runMax) {
    for (const k of ["cpu", "memoryMb", "pids", "diskMb"] as const) {
      if (runDefaults[k] > runMax[k]) throw new ConfigError(`KAIROS_RUN_DEFAULTS: ${k} ${runDefaults[k]} is above KAIROS_RUN_MAX's ${runMax[k]}`);
    }
  }
  return {
    sandbox,
    sandboxUidBase: int("KAIROS_SANDBOX_UID_BASE", env.KAIROS_SANDBOX_UID_BASE, 61_000, 1_000, 4_000_000_000),
    sandboxRoPaths: roPaths,
    sandboxRwPaths: paths("KAIROS_SANDBOX_RW_PATHS"),
    executorCapacity: capacity ? { cpu: capacity.cpu, memoryMb: capacity.memoryMb } : null,
    runDefaults,
    runMax,
    egress: egressSettings(env),
  };
}

const DURATION_RE = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** A small ISO-8601 duration reader for settings (days, hours, minutes, seconds). */
export function settingDuration(name: string, raw: string): number {
  const m = DURATION_RE.exec(raw.trim());
  if (!m || raw.trim() === "P" || raw.trim().endsWith("T")) {
    throw new ConfigError(`${name}: "${raw}" is not an ISO-8601 duration; use e.g. PT30S, PT5M, PT12H or P1D`);
  }
  const [, d, h, min, s] = m;
  const ms = (Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(min ?? 0) * 60 + Number(s ?? 0)) * 1000;
  if (ms <= 0) throw new ConfigError(`${name}: duration must be positive (got "${raw}")`);
  return ms;
}

function int(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}: "${raw}" must be a whole number from ${min} to ${max}`);
  }
  return n;
}

function bool(name: string, raw: string | undefined, dflt: boolean): boolean {
  if (raw === undefined || raw === "") return dflt;
  if (/^(true|1|on|yes)$/i.test(raw)) return true;
  if (/^(false|0|off|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name}: "${raw}" must be true or false`);
}

/** `N/duration` (e.g. `1200/PT1M`: 1200 per minute) or `off`. */
function rate(name: string, raw: string | undefined, dflt: string): Rate | null {
  const value = (raw === undefined || raw === "" ? dflt : raw).trim();
  if (/^off$/i.test(value)) return null;
  const m = /^(\d+)\/(P\S+)$/.exec(value);
  const points = m ? Number(m[1]) : NaN;
  if (!m || !Number.isInteger(points) || points < 1 || points > 1_000_000_000) {
    throw new ConfigError(`${name}: "${raw}" must be N/duration with N ≥ 1 (e.g. 1200/PT1M) or off`);
  }
  const durationMs = settingDuration(name, m[2]!);
  if (durationMs < 1000) throw new ConfigError(`${name}: the duration must be at least PT1S (got "${raw}")`);
  return { points, durationMs };
}

function apiGuard(env: Env, dev: boolean): ApiGuardSettings {
  const login: LoginLimitSettings = {
    freeFailures: int("KAIROS_LOGIN_FREE_FAILURES", env.KAIROS_LOGIN_FREE_FAILURES, 3, 0, 1_000),
    lockoutAfter: int("KAIROS_LOGIN_LOCKOUT_AFTER", env.KAIROS_LOGIN_LOCKOUT_AFTER, 10, 1, 1_000),
    addressFreeFailures: int("KAIROS_LOGIN_ADDRESS_FREE_FAILURES", env.KAIROS_LOGIN_ADDRESS_FREE_FAILURES, 10, 0, 100_000),
    addressLockoutAfter: int("KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER", env.KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER, 100, 1, 100_000),
    delayMs: settingDuration("KAIROS_LOGIN_DELAY", env.KAIROS_LOGIN_DELAY ?? "PT1S"),
    lockoutMs: settingDuration("KAIROS_LOGIN_LOCKOUT", env.KAIROS_LOGIN_LOCKOUT ?? "PT15M"),
    windowMs: settingDuration("KAIROS_LOGIN_WINDOW", env.KAIROS_LOGIN_WINDOW ?? "PT1H"),
  };
  if (login.freeFailures >= login.lockoutAfter) {
    throw new ConfigError(`KAIROS_LOGIN_FREE_FAILURES (${login.freeFailures}) must be below KAIROS_LOGIN_LOCKOUT_AFTER (${login.lockoutAfter})`);
  }
  if (login.addressFreeFailures >= login.addressLockoutAfter) {
    throw new ConfigError(
      `KAIROS_LOGIN_ADDRESS_FREE_FAILURES (${login.addressFreeFailures}) must be below KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER (${login.addressLockoutAfter})`,
    );
  }
  return {
    query: {
      maxDepth: int("KAIROS_MAX_DEPTH", env.KAIROS_MAX_DEPTH, 10, 2, 100),
      maxAliases: int("KAIROS_MAX_ALIASES", env.KAIROS_MAX_ALIASES, 20, 0, 1_000),
      maxTokens: int("KAIROS_MAX_TOKENS", env.KAIROS_MAX_TOKENS, 1_000, 50, 100_000),
      maxDirectives: int("KAIROS_MAX_DIRECTIVES", env.KAIROS_MAX_DIRECTIVES, 20, 0, 1_000),
      maxCost: int("KAIROS_MAX_COST", env.KAIROS_MAX_COST, 10_000, 10, 10_000_000),
      maxSubscriptionCost: int("KAIROS_MAX_SUBSCRIPTION_COST", env.KAIROS_MAX_SUBSCRIPTION_COST, 1_000, 10, 10_000_000),
      introspection: bool("KAIROS_INTROSPECTION", env.KAIROS_INTROSPECTION, dev),
      fieldSuggestions: bool("KAIROS_FIELD_SUGGESTIONS", env.KAIROS_FIELD_SUGGESTIONS, dev),
    },
    requestRate: rate("KAIROS_RATE_REQUESTS", env.KAIROS_RATE_REQUESTS, "1200/PT1M"),
    refusedCost: int("KAIROS_RATE_REFUSED_COST", env.KAIROS_RATE_REFUSED_COST, 20, 1, 10_000),
    submissionRate: rate("KAIROS_RATE_SUBMISSIONS", env.KAIROS_RATE_SUBMISSIONS, "120/PT1M"),
    login,
    maxBodyBytes: int("KAIROS_MAX_BODY_BYTES", env.KAIROS_MAX_BODY_BYTES, 1_048_576, 1_024, 100 * 1_048_576),
    trustProxyHops: int("KAIROS_TRUST_PROXY", env.KAIROS_TRUST_PROXY, 0, 0, 10),
  };
}

function url(name: string, raw: string | undefined, schemes: string[]): string | null {
  if (raw === undefined || raw === "") return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a URL; expected ${schemes.map((s) => `${s}//host:port`).join(" or ")}`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(`${name}: scheme ${parsed.protocol} is not supported; use ${schemes.join(" or ")}`);
  }
  return raw;
}

const FLAG_TO_ENV: Record<string, string> = {
  "--port": "KAIROS_PORT",
  "--host": "KAIROS_HOST",
  "--data-dir": "KAIROS_DATA_DIR",
  "--mongo-url": "MONGO_URL",
  "--redis-url": "REDIS_URL",
  "--log-level": "KAIROS_LOG_LEVEL",
  "--slots": "KAIROS_EXECUTOR_SLOTS",
  "--pools": "KAIROS_POOLS",
  "--node-name": "KAIROS_NODE_NAME",
  "--shards": "KAIROS_SHARDS",
  "--metrics-port": "KAIROS_METRICS_PORT",
};

/** Flags override the environment: `--port 5000` or `--port=5000`. Unknown flags are refused. */
export function applyFlags(argv: readonly string[], env: Env): Env {
  const out: Env = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = FLAG_TO_ENV[flag];
    if (!key) {
      throw new ConfigError(`unknown option ${flag}; allowed: ${Object.keys(FLAG_TO_ENV).join(", ")}`);
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value.startsWith("--")) throw new ConfigError(`option ${flag} needs a value`);
    out[key] = value;
  }
  return out;
}

export function loadConfig(role: Role, env: Env = process.env): KairosConfig {
  const dev = role === "dev";
  const logLevel = (env.KAIROS_LOG_LEVEL ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`KAIROS_LOG_LEVEL: "${env.KAIROS_LOG_LEVEL}" is not one of ${LOG_LEVELS.join(", ")}`);
  }
  const mongoUrl = url("MONGO_URL", env.MONGO_URL, ["mongodb:", "mongodb+srv:"]);
  const redisUrl = url("REDIS_URL", env.REDIS_URL, ["redis:", "rediss:"]);
  if (!dev && !mongoUrl) throw new ConfigError(`MONGO_URL is required for the ${role} role (only dev embeds a store)`);
  if (!dev && !redisUrl) throw new ConfigError(`REDIS_URL is required for the ${role} role (only dev runs without Redis)`);
  const jwtSecret = env.KAIROS_JWT_SECRET ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError("KAIROS_JWT_SECRET: must be at least 32 characters (use e.g. `openssl rand -hex 32`)");
  }
  if (!dev && role !== "executor" && role !== "scheduler" && jwtSecret === null) {
    throw new ConfigError(`KAIROS_JWT_SECRET is required for the ${role} role (only dev generates one)`);
  }
  const pools = (env.KAIROS_POOLS ?? "default").split(",").map((p) => p.trim()).filter(Boolean);
  for (const p of pools) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(p)) {
      throw new ConfigError(`KAIROS_POOLS: pool name "${p}" may use only letters, digits, '_', '.', '-' (1–64 characters)`);
    }
  }
  if (pools.length === 0) throw new ConfigError("KAIROS_POOLS: name at least one pool");
  const adminUser = env.KAIROS_ADMIN_USER ?? "admin";
  if (!/^[A-Za-z0-9_.@-]{3,64}$/.test(adminUser)) {
    throw new ConfigError("KAIROS_ADMIN_USER: 3–64 characters of letters, digits, '_', '.', '@', '-'");
  }
  const adminPassword = env.KAIROS_ADMIN_PASSWORD ?? null;
  if (adminPassword !== null && adminPassword.length < 8) {
    throw new ConfigError("KAIROS_ADMIN_PASSWORD: at least 8 characters");
  }
  return {
    role,
    port: int("KAIROS_PORT", env.KAIROS_PORT, 4000, 0, 65_535),
    host: env.KAIROS_HOST ?? (dev ? "127.0.0.1" : "0.0.0.0"),
    dataDir: resolve(env.KAIROS_DATA_DIR ?? "./.kairos"),
    mongoUrl,
    mongoDb: env.MONGO_DB ?? "kairos",
    redisUrl,
    redisPrefix: env.KAIROS_REDIS_PREFIX ?? "kairos",
    jwtSecret,
    jwtTtlMs: settingDuration("KAIROS_JWT_TTL", env.KAIROS_JWT_TTL ?? "PT12H"),
    adminUser,
    adminPassword,
    logLevel,
    shards: int("KAIROS_SHARDS", env.KAIROS_SHARDS, 64, 1, 16_384),
    executorSlots: int("KAIROS_EXECUTOR_SLOTS", env.KAIROS_EXECUTOR_SLOTS, Math.max(2, cpus().length * 2), 1, 1_024),
    pools,
    nodeName: env.KAIROS_NODE_NAME ?? hostname(),
    metricsPort: env.KAIROS_METRICS_PORT ? int("KAIROS_METRICS_PORT", env.KAIROS_METRICS_PORT, 0, 0, 65_535) : null,
    leaseMs: settingDuration("KAIROS_LEASE", env.KAIROS_LEASE ?? "PT30S"),
    shardLeaseMs: shardLease(env.KAIROS_SHARD_LEASE),
    stageAheadMs: stageAhead(env.KAIROS_STAGE_AHEAD),
    catchupWindowMs: settingDuration("KAIROS_CATCHUP_WINDOW", env.KAIROS_CATCHUP_WINDOW ?? "PT1H"),
    ...sandboxSettings(dev, env),
    api: apiGuard(env, dev),
  };
}

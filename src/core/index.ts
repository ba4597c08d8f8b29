/**
 * The services, by capability (docs/architecture.md, layer 5): runs (`runs/`: materialising a fire,
 * claims, transitions, attempts, retries, cancellation, overlap locks, per-user slots, staging, the
 * bound on waiting runs), jobs (`jobs/`), users, idempotency, events, resources and allocations,
 * pools, nodes, the fire ledger, artifacts (`artifacts/`) and run logs (`logs/`). A service acting
 * for a user takes the principal; MongoDB is reached through store/, Redis through shared-state/.
 */
export { AlertBus, AlertDeadlines, AlertEngine, AlertSilences, type AlertFiredEvent, type AlertRuleInput, AlertRules, AlertSender, DEFAULT_SENDER, MAX_RATE_MIN_RUNS } from "./alerts/index.js";
export { type Allocation } from "./allocations.js";
export { ArtifactService, ArtifactSweeper, resolveArtifact, resolveArtifactOfOwner } from "./artifacts/index.js";
export { decodeRunPayload, encodeRunPayload, type RunEvent, RunEvents } from "./events.js";
export { FireLedger } from "./fires.js";
export { HttpSigning, signatureHeader } from "./http-signing.js";
export { type ArtifactLookup, formatStatusRange, isSuccessStatus, specArtifact } from "./job-kinds.js";
export { backfillSlots, type DagTimerActor, type JobInput, type JobPatch, JobService, type JobSpecInput, MAX_BACKFILL, MAX_PRIORITY, PoolNodes, type Submit, validateCatchup, validateDescription, validateName, validatePriority } from "./jobs/index.js";
export { Lookups, LookupService } from "./lookups.js";
export { NodeReads } from "./nodes.js";
export { PoolCoverage } from "./pools.js";
export { DEFAULT_RESOURCES, fitsWithin, parseResourceSetting, RESOURCE_BOUNDS, RESOURCE_KEYS, resourcesOf } from "./resources.js";
export { RunReads } from "./run-reads.js";
export { type AttemptOutcome, type DagFired, type Fired, type DagFireHook, type DagFireLock, type DagPort, type LockRequest, type LockSubject, readyEntry, RunService, type StagedFires, WaitingRuns } from "./runs/index.js";
export { httpAgents, type HttpAgents, type HttpTargetRules, ssrfRefusal } from "./ssrf.js";
export { MAX_CONCURRENT_RUNS_LIMIT, UserService } from "./users.js";
export { validateSpec, wrapSchedule, type PoolNode } from "./spec.js";
export { IdempotencyService, jsonFingerprint } from "./idempotency.js";
export { DEFAULT_LOG_READ_CHUNKS, DEFAULT_LOG_SETTINGS, MAX_LOG_READ_CHUNKS, LogArchiver, type LogBatch, logBlobs, type LogChunk, type LogSettings, LogWriter, RunLogs } from "./logs/index.js";
export { WaitReads, WaitService } from "./waits/index.js";
export { AuditIntentError, AuditService, type AuditSettings, capped, DEFAULT_AUDIT_SETTINGS, REDACTED } from "./audit/index.js";
export { type ClusterFigures, ClusterStats, statsWindowMs } from "./cluster-stats.js";
export { type NodeFigures } from "./node-figures.js";
export { ClusterStatsFeed } from "./cluster-stats-feed.js";
export { type Forecast, ForecastService, MAX_HOTSPOT_MIN_RUNS } from "./forecast.js";

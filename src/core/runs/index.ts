/** The run capabilities' public surface: the RunService facade and the types its callers use. */
export { RunService } from "./service.js";
export type { AttemptOutcome, DagFired, DagFireHook, DagFireLock, DagPort, RunServiceDeps } from "./types.js";
export type { Fired, MaterializeArgs, Materialized } from "./materialize.js";
export { type StagedFires, type WithdrawOptions, type WithdrawnFire } from "./staged.js";
export { readyEntry } from "./ready.js";
export { JOB_LOCK, type LockRequest, type LockSubject, type RequestLock } from "./overlap.js";
export { WaitingRuns, WAITING_COUNT_TTL_MS } from "./waiting.js";

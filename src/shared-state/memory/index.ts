/**
 * In-memory adapters for every shared-state port, for `kairos dev` (one process, no Redis).
 * They follow the same contract as the Redis adapters (test/shared-state/contract.ts),
 * including fencing: a scheduler loop written against them behaves the same in production.
 */
export { MemoryShardCoordinator } from "./coordinator.js";
export { MemoryEventBus } from "./event-bus.js";
export { MemoryReadyQueue } from "./ready-queue.js";
export { MemoryTimeWheel } from "./time-wheel.js";
export { createMemorySharedState, type MemorySharedStateOptions } from "./state.js";

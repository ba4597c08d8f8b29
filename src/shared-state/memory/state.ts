/** The in-memory shared state: the four adapters for one process (see index.ts). */
import { sharedState, type SharedState } from "../ports.js";
import type { LogFn } from "../checks.js";
import { MemoryShardCoordinator } from "./coordinator.js";
import { MemoryEventBus } from "./event-bus.js";
import { MemoryReadyQueue } from "./ready-queue.js";
import { MemoryTimeWheel } from "./time-wheel.js";

export interface MemorySharedStateOptions {
  /** Number of time-wheel shards. @default 64 */
  shardCount?: number;
  /** Where a throwing event-bus handler is reported. @default a no-op */
  log?: LogFn;
}

export function createMemorySharedState(opts: MemorySharedStateOptions = {}): SharedState {
  const shardCount = opts.shardCount ?? 64;
  if (!Number.isInteger(shardCount) || shardCount < 1) throw new RangeError(`shardCount must be a positive integer, got ${shardCount}`);
  const bus = new MemoryEventBus(opts.log ?? (() => {}));
  const coordinator = new MemoryShardCoordinator(shardCount);
  const wheel = new MemoryTimeWheel(shardCount, coordinator, bus);
  const ready = new MemoryReadyQueue(bus);
  return sharedState({ wheel, ready, bus, coordinator });
}

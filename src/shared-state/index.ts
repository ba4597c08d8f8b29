/**
 * What the roles share besides MongoDB (docs/redis-layout.md): the ports (`TimeWheel`,
 * `ReadyQueue`, `EventBus`, `ShardCoordinator`, the bus channels' names in `Channels`), shard
 * hashing, and two adapters of each: Redis (`redis/`, distributed) and in-memory (`memory/`, for
 * `kairos dev`), held to one contract.
 */
export * from "./checks.js";
export * from "./memory/index.js";
export * from "./ports.js";
export * from "./redis/index.js";

/**
 * Redis adapters for every shared-state port (distributed deployments). Key layout, script
 * contracts, fencing rules and crash windows: docs/redis-layout.md.
 */
export { createRedisClient, openRedis, quitRedis, type RedisClient, type RedisClientOptions } from "./connection.js";
export { describeRedisTarget, parseRedisNodes, type RedisAuth, type RedisNode, type RedisTarget, type RedisTls } from "./target.js";
export { redisKeys, type RedisKeys, type ShardKeys } from "./keys.js";
export { allScripts, type LuaScript } from "./lua/all.js";
export { RedisShardCoordinator } from "./coordinator.js";
export { RedisEventBus } from "./event-bus.js";
export { RedisReadyQueue } from "./ready-queue.js";
export { RedisTimeWheel } from "./time-wheel.js";
export { createRedisSharedState, type RedisSharedStateOptions } from "./state.js";

/**
 * The scheduler role (README.md in this folder has one fire's pipeline): `Scheduler` owns a share of
 * the time-wheel shards, turns due timers into runs, promotes retries, queues again the runs whose
 * lease ended, and repairs what a crash or a Redis data loss left behind.
 */
export * from "./loop.js";

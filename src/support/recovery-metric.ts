/**
 * `kairos_recovery_seconds{cause}`: how long due work waited on a fault's recovery, by cause
 * (issue #14). Kept apart from metrics.ts while issue #14's parts are built side by side: when
 * metrics.ts registers a histogram of this name, that one is used (the registry hands back a metric
 * already registered under the name), else this file registers its own.
 */
import { Histogram } from "prom-client";
import { registry } from "./metrics.js";

export type RecoveryCause = "executor_lost" | "shard_moved" | "store_rebuilt";

const RECOVERY_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 45, 60, 120, 300];

let histogram: Histogram<"cause"> | null = null;

const NAME = "kairos_recovery_seconds";

function recoverySeconds(): Histogram<"cause"> {
  if (histogram) return histogram;
  const existing = registry.getSingleMetric(NAME);
  if (existing instanceof Histogram) return (histogram = existing as Histogram<"cause">);
  histogram = new Histogram({
    name: NAME,
    help: "Time from a fault to the recovery of the work it held up, by cause (executor_lost, shard_moved, store_rebuilt).",
    labelNames: ["cause"] as const,
    buckets: RECOVERY_BUCKETS,
    registers: [registry],
  });
  return histogram;
}

/** Records one recovery of `cause` that took `ms`. */
export function observeRecovery(cause: RecoveryCause, ms: number): void {
  recoverySeconds().observe({ cause }, Math.max(0, ms) / 1000);
}

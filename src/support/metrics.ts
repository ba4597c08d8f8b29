/**
 * Prometheus metrics through prom-client, the ecosystem's library: counters and histograms the
 * components record, gauges sampled at scrape time, and Node's process metrics. One registry per
 * process, our own rather than prom-client's global one, so nothing another library registers
 * globally ends up on /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from "prom-client";

/** The process's registry; `render()` is the body of `GET /metrics` (Prometheus text format). */
export class MetricsRegistry extends Registry {
  /** Registers `m` unless a metric of that name already is; returns the registered one. */
  register<M extends Metric & { name: string }>(m: M): M {
    const existing = this.getSingleMetric(m.name);
    if (existing) return existing as M;
    this.registerMetric(m);
    return m;
  }

  unregister(name: string): void {
    this.removeSingleMetric(name);
  }

  render(): Promise<string> {
    return this.metrics();
  }
}

export const registry = new MetricsRegistry();

type Sample<L extends string> = Array<[Partial<Record<L, string>>, number]>;

/**
 * A gauge whose values are read when scraped (queue depths, node counts). A failed sample (store
 * unreachable) leaves the gauge without series for that scrape instead of failing the whole scrape.
 */
export class SampledGauge<L extends string = string> extends Gauge<L> {
  constructor(
    readonly name: string,
    help: string,
    labelNames: readonly L[],
    sample: () => Promise<Sample<L>>,
  ) {
    super({
      name,
      help,
      labelNames,
      registers: [],
      async collect() {
        let values: Sample<L> = [];
        try {
          values = await sample();
        } catch {
          // reported as no series; the other metrics are still scraped
        }
        this.reset();
        for (const [labels, value] of values) this.set(labels, value);
      },
    });
  }
}

const LATENESS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** What a run recovered from (the `cause` label of `kairos_recovery_seconds`). */
export type RecoveryCause = "executor_lost" | "shard_moved" | "store_rebuilt";

/** Records one run's recovery: `faultAt` to `queuedAt` (ms), never negative. */
export function observeRecovery(cause: RecoveryCause, faultAt: number, queuedAt: number): void {
  metrics.recoverySeconds.observe({ cause }, Math.max(0, queuedAt - faultAt) / 1000);
}

/** The metrics the components record; names follow Prometheus conventions. */
export const metrics = {
  fires: new Counter({
    name: "kairos_fires_total",
    help: "Schedule slots by their recorded outcome (the fire ledger).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  fireLateness: new Histogram({
    name: "kairos_fire_lateness_seconds",
    help: "How late a slot was handled after its nominal time.",
    buckets: LATENESS_BUCKETS,
    registers: [registry],
  }),
  runsFinished: new Counter({
    name: "kairos_runs_finished_total",
    help: "Runs that reached a final status, by status (WITHDRAWN: staged ahead and taken back before their fire time by a pause or an edit).",
    labelNames: ["status"] as const,
    registers: [registry],
  }),
  attempts: new Counter({ name: "kairos_attempts_total", help: "Attempts ended, by outcome.", labelNames: ["outcome"] as const, registers: [registry] }),
  claimLatency: new Histogram({
    name: "kairos_claim_latency_seconds",
    help: "From QUEUED to claimed by an executor.",
    buckets: LATENESS_BUCKETS,
    registers: [registry],
  }),
  /**
   * Recovery after a fault: from the fault time to the moment the affected run is QUEUED again
   * (back in its ready queue, an executor can take it). The fault time depends on the cause:
   * - `executor_lost`: the run's lease expiry (a RUNNING run), or its claim marker's expiry (a run
   *   taken from the ready queue and never confirmed), on the scheduler that owned the shard then;
   * - `shard_moved`: the same, for a run whose shard this scheduler acquired after that expiry
   *   (the previous owner died or let go before it recovered the run);
   * - `store_rebuilt`: the moment the shared state's loss was noticed, to the run queued again.
   * Another cause is one more label value: observe with {@link RecoveryCause}.
   */
  recoverySeconds: new Histogram({
    name: "kairos_recovery_seconds",
    help: "From a fault (lease or claim expiry, or a store loss noticed) to the affected run queued again, by cause.",
    labelNames: ["cause"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  }),
  staleResults: new Counter({
    name: "kairos_stale_results_total",
    help: "Results refused because the fencing token was stale.",
    registers: [registry],
  }),
  auditEntries: new Counter({
    name: "kairos_audit_entries_total",
    help: "Audit entries written (one per GraphQL mutation call), by outcome: OK or the error code the caller got.",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  auditWriteFailures: new Counter({
    name: "kairos_audit_write_failures_total",
    help: "Mutation calls whose audit entry the store did not take (the call was answered; the failure is logged).",
    registers: [registry],
  }),
};

// Process CPU and memory, open fds, heap, GC pauses and event-loop lag (`process_*`, `nodejs_*`).
// They are read at scrape time, except the event-loop lag, which a libuv timer samples: at 100 ms
// (prom-client's default is 10 ms) it costs ~0.05% of a core per idle process instead of ~0.5%,
// and a stall that makes fires late still shows in full.
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });

/** The /metrics body: prom-client behind the names, labels, help texts and buckets Kairos exposes. */
import { describe, expect, it } from "vitest";
import { metrics, registry, SampledGauge } from "../src/support/metrics.js";

const lines = async () => (await registry.render()).split("\n");

describe("metrics registry", () => {
  it("renders every Kairos metric with its help text and type, in the Prometheus text format", async () => {
    const text = await registry.render();
    for (const [name, type, help] of [
      ["kairos_fires_total", "counter", "Schedule slots by their recorded outcome (the fire ledger)."],
      ["kairos_fire_lateness_seconds", "histogram", "How late a slot was handled after its nominal time."],
      ["kairos_runs_finished_total", "counter", "Runs that reached a final status, by status (WITHDRAWN: staged ahead and taken back before their fire time by a pause or an edit)."],
      ["kairos_attempts_total", "counter", "Attempts ended, by outcome."],
      ["kairos_claim_latency_seconds", "histogram", "From QUEUED to claimed by an executor."],
      ["kairos_stale_results_total", "counter", "Results refused because the fencing token was stale."],
    ]) {
      expect(text).toContain(`# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`);
    }
    expect(registry.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("counts labelled counters, with an increment", async () => {
    metrics.fires.inc({ outcome: "FIRED" });
    metrics.fires.inc({ outcome: "FIRED" }, 2);
    metrics.runsFinished.inc({ status: "SUCCEEDED" });
    metrics.staleResults.inc();
    const l = await lines();
    expect(l).toContain('kairos_fires_total{outcome="FIRED"} 3');
    expect(l).toContain('kairos_runs_finished_total{status="SUCCEEDED"} 1');
    expect(l).toContain("kairos_stale_results_total 1");
  });

  it("keeps cumulative histogram buckets on the lateness boundaries", async () => {
    metrics.claimLatency.observe(0.02);
    metrics.claimLatency.observe(400);
    const l = await lines();
    const buckets = l.filter((x) => x.startsWith("kairos_claim_latency_seconds_bucket"));
    expect(buckets.map((b) => /le="([^"]+)"/.exec(b)![1])).toEqual(
      ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300", "+Inf"],
    );
    expect(l).toContain('kairos_claim_latency_seconds_bucket{le="0.01"} 0');
    expect(l).toContain('kairos_claim_latency_seconds_bucket{le="0.025"} 1');
    expect(l).toContain('kairos_claim_latency_seconds_bucket{le="300"} 1');
    expect(l).toContain('kairos_claim_latency_seconds_bucket{le="+Inf"} 2');
    expect(l).toContain("kairos_claim_latency_seconds_sum 400.02");
    expect(l).toContain("kairos_claim_latency_seconds_count 2");
  });

  it("samples gauges at scrape time, escapes label values, and survives a failing sample", async () => {
    let depth = 3;
    const ok = new SampledGauge("test_queue_depth", "Runs waiting.", ["pool"], async () => [[{ pool: 'a"b' }, depth]]);
    const failing = new SampledGauge("test_nodes", "Nodes.", ["status"], async () => {
      throw new Error("store unreachable");
    });
    expect(registry.register(ok)).toBe(ok);
    registry.register(failing);
    try {
      expect(await lines()).toContain('test_queue_depth{pool="a\\"b"} 3');
      depth = 5;
      const l = await lines();
      expect(l).toContain('test_queue_depth{pool="a\\"b"} 5');
      expect(l.filter((x) => x.startsWith("test_nodes"))).toEqual([]);
      expect(l).toContain("kairos_stale_results_total 1");
      // Registering a second gauge under a taken name keeps the first.
      expect(registry.register(new SampledGauge("test_queue_depth", "Other.", [], async () => []))).toBe(ok);
    } finally {
      registry.unregister("test_queue_depth");
      registry.unregister("test_nodes");
    }
    expect(await registry.render()).not.toContain("test_queue_depth");
  });

  it("includes Node's process metrics", async () => {
    const text = await registry.render();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
  });
});

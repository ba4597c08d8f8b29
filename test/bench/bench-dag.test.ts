/** The DAG bench (bench/dag.ts): a tiny BullMQ flow run end to end, the Kairos DAG input, the report. */
import { describe, expect, inject, it } from "vitest";
import { benchBullmqDag, formatDag, wideDag, type DagBenchResult } from "../../bench/dag.js";
import { validateDag } from "../../src/dag/index.js";

describe("bench/dag", () => {
  it("runs small flows in a forked Worker: every child before the join, each round measured", async () => {
    const r = await benchBullmqDag(inject("redisUrl"), { children: 20, rounds: 2, timeoutMs: 20_000 });
    expect(r.rounds).toHaveLength(2);
    for (const round of r.rounds) {
      expect(round.toLastChildStartMs).toBeGreaterThanOrEqual(0);
      expect(round.joinDelayMs).toBeGreaterThanOrEqual(0);
      expect(round.totalMs).toBeGreaterThanOrEqual(round.toLastChildStartMs);
    }
    expect(formatDag([r])).toContain("bullmq");
  }, 60_000);

  it("builds a 1 → N → 1 DAG that Kairos accepts at the 1,000-task cap", () => {
    const dag = wideDag("wide", 998) as { tasks: Array<{ key: string; dependsOn: string[] }> };
    expect(dag.tasks).toHaveLength(1000);
    expect(validateDag(dag)).toEqual([]);
    expect(dag.tasks.at(-1)!.dependsOn).toHaveLength(998);
  });

  it("builds the issue's 1 → 1,000 → 1 as a mapped DAG Kairos accepts: root's result is the list the middle maps over", () => {
    const dag = wideDag("wide", 1000, "mapped") as { tasks: Array<{ key: string; dependsOn: string[]; mapOver?: string; spec: { env?: Record<string, string> } }> };
    expect(validateDag(dag)).toEqual([]);
    expect(dag.tasks.map((t) => [t.key, t.dependsOn, t.mapOver ?? null])).toEqual([
      ["root", [], null],
      ["c", ["root"], "root"],
      ["join", ["c"], null],
    ]);
    expect(JSON.parse(dag.tasks[0]!.spec.env!.BENCH_RESULT!)).toHaveLength(1000);
  });

  it("prints the ratios of each Kairos variant to BullMQ", () => {
    const s = (v: number) => ({ count: 1, min: v, mean: v, p50: v, p95: v, p99: v, max: v });
    const mk = (system: "kairos" | "bullmq", start: number, join: number): DagBenchResult => ({
      system,
      variant: system === "kairos" ? "no process" : undefined,
      children: 998,
      rounds: [{ toLastChildStartMs: start, joinDelayMs: join, fanOutMs: null, totalMs: start + join }],
      toLastChildStart: s(start),
      joinDelay: s(join),
      fanOut: null,
      total: s(start + join),
      notes: [],
    });
    const text = formatDag([mk("kairos", 500, 10), mk("bullmq", 2000, 20)]);
    expect(text).toContain("BullMQ ÷ kairos (no process) (> 1: Kairos faster): → last child start p50 4.00×");
    expect(text).toContain("join delay p50 2.00×");
  });
});

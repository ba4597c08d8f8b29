/**
 * DAG workflows end to end over the real API and executors (issue #15): dependency order, fan-out
 * and fan-in, data along edges, mapping, trigger rules, cancel, retry from failed.
 */
import { describe, expect, it } from "vitest";
import { code, makeUser, message } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { collect, wsClient } from "../helpers/graphql.js";
import { createDag, finishedDagRun, gql, gqlOk, listTasks, readDagRun, row, tasksInput, triggerDag, waitFor, type AsRead } from "./helpers.js";

// A DAG run takes one submission per task (src/resolvers/dag.resolver.ts): these tests trigger
// hundreds of tasks a minute as one user.
const t = useTestApp({ env: { KAIROS_RATE_SUBMISSIONS: "100000/PT1M" } });

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

  it("keeps at most maxParallel task instances running at once", async () => {
    const tasks = Array.from({ length: 6 }, (_, i) => ({ key: `p${i}`, command: "sleep 0.3" }));
    const id = await createDag(t.app.url, t.admin, "narrow", tasks, { maxParallel: 2 });
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("SUCCEEDED");
    const spans = tasks.map((x) => row(run, x.key).run!).map((r) => [Date.parse(r.startedAt!), Date.parse(r.finishedAt!)] as const);
    for (const [s] of spans) expect(spans.filter(([a, b]) => a <= s && s < b).length).toBeLessThanOrEqual(2);
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

  it("maps over a mapped task: one instance per instance of it, each given that instance's result", async () => {
    // It failed the second mapped task ("that task's result must be a JSON array; it wrote no
    // result"): the source's results were read only once its stored state said SUCCEEDED, which a
    // mapped task's aggregate says only after the round that expands its child.
    const id = await createDag(t.app.url, t.admin, "map-of-map", [
      { key: "src", command: `printf '[1,2,3]' > "$KAIROS_RESULT"` },
      { key: "m1", command: `python3 -c 'import json,os; i=json.load(open(os.environ["KAIROS_INPUTS"])); json.dump([i["item"], i["item"] * 10], open(os.environ["KAIROS_RESULT"],"w"))'`, dependsOn: ["src"], mapOver: "src" },
      { key: "m2", command: `python3 -c 'import json,os; i=json.load(open(os.environ["KAIROS_INPUTS"])); json.dump(sum(i["item"]), open(os.environ["KAIROS_RESULT"],"w"))'`, dependsOn: ["m1"], mapOver: "m1" },
      { key: "join", command: `cat "$KAIROS_INPUTS" > "$KAIROS_RESULT"`, dependsOn: ["m2"] },
    ]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status, JSON.stringify(run.tasks.map((x) => [x.key, x.mapIndex, x.status, x.note, x.run?.error]))).toBe("SUCCEEDED");
    expect([0, 1, 2].map((i) => row(run, "m1", i).result)).toEqual([[1, 10], [2, 20], [3, 30]]);
    expect([0, 1, 2].map((i) => row(run, "m2", i).result)).toEqual([11, 22, 33]);
    expect(row(run, "join").result).toEqual({ m2: [11, 22, 33] });
  });

  it("fails a task whose result is over 64 KiB, with a clear error", async () => {
    const id = await createDag(t.app.url, t.admin, "big-result", [{ key: "big", command: `head -c 70000 /dev/zero | tr '\\0' 1 > "$KAIROS_RESULT"` }]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("FAILED");
    expect(row(run, "big").run!.error).toMatch(/RESULT_TOO_LARGE.*65536/);
  });
});

describe("failures, trigger rules, cancel and retry", () => {
  it("decides each trigger rule's child of a failing branch", async () => {
    const rules = ["ALL_SUCCESS", "ALL_DONE", "ALL_FAILED", "ONE_SUCCESS", "ONE_FAILED", "NONE_FAILED"];
    const id = await createDag(t.app.url, t.admin, "rules", [
      { key: "ok", command: "true" },
      { key: "bad", command: "exit 3" },
      ...rules.map((r) => ({ key: `child_${r}`, command: "true", dependsOn: ["ok", "bad"], trigger: r })),
      { key: "after_bad", command: "true", dependsOn: ["child_ALL_SUCCESS"] },
    ]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("FAILED");
    expect(row(run, "bad").status).toBe("FAILED");
    expect(row(run, "bad").run!.error).toBe("exit code 3");
    const expected: Record<string, string> = {
      ALL_SUCCESS: "UPSTREAM_FAILED",
      ALL_DONE: "SUCCEEDED",
      ALL_FAILED: "SKIPPED",
      ONE_SUCCESS: "SUCCEEDED",
      ONE_FAILED: "SUCCEEDED",
      NONE_FAILED: "UPSTREAM_FAILED",
    };
    for (const r of rules) expect([r, row(run, `child_${r}`).status]).toEqual([r, expected[r]]);
    expect(row(run, "after_bad").status).toBe("UPSTREAM_FAILED");
    // Tasks that never ran have no run.
    expect(row(run, "child_ALL_SUCCESS").run).toBeNull();
  });

  it("retries a task's run with its own retry policy (an ordinary run), and its children wait for the retry", async () => {
    const id = await createDag(t.app.url, t.admin, "run-retries", [
      { key: "flaky", command: `test "$KAIROS_ATTEMPT" -ge 2`, retry: { maxAttempts: 2, initial: "PT0.2S", backoff: "FIXED" } },
      { key: "after", command: "true", dependsOn: ["flaky"] },
    ]);
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("SUCCEEDED");
    expect(row(run, "flaky").run!.attempt).toBe(2);
    expect(row(run, "flaky").attempt).toBe(1);
    expect(new Date(row(run, "after").run!.startedAt!).getTime()).toBeGreaterThanOrEqual(new Date(row(run, "flaky").run!.finishedAt!).getTime());
  });

  it("failFast cancels the rest", async () => {
    const id = await createDag(
      t.app.url,
      t.admin,
      "fail-fast",
      [
        { key: "bad", command: "sleep 0.3; exit 1" },
        { key: "slow", command: "sleep 30" },
        { key: "later", command: "true", dependsOn: ["slow"] },
      ],
      { failFast: true },
    );
    const run = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(run.status).toBe("FAILED");
    expect(row(run, "slow").status).toBe("CANCELLED");
    expect(row(run, "slow").run!.status).toBe("CANCELLED");
    expect(row(run, "later").status).toBe("CANCELLED");
  });

  it("warns of tasks in a pool no executor serves, naming them, as a job does", async () => {
    const tasks = [
      { key: "prep", spec: { kind: "COMMAND", command: "true" } },
      ...["train", "eval", "tune", "export"].map((key) => ({ key, dependsOn: ["prep"], spec: { kind: "COMMAND", command: "true", pool: "gpu" } })),
    ];
    const made = await gqlOk<{ createDag: { id: string; warnings: string[] } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id warnings } }`, { input: { name: "needs-gpu", tasks } }, t.admin);
    expect(made.createDag.warnings).toHaveLength(1);
    expect(made.createDag.warnings[0]).toMatch(/^tasks "train", "eval", "tune" and 1 more: no online executor serves pool "gpu": its runs wait QUEUED until one does \(pools served now: default/);
    // Read again (without its tasks in the listing's read): the same.
    const read = await gqlOk<{ dags: { edges: Array<{ node: { id: string; warnings: string[] } }> } }>(t.app.url, `{ dags(first: 5) { edges { node { id warnings } } } }`, {}, t.admin);
    expect(read.dags.edges.find((e) => e.node.id === made.createDag.id)!.node.warnings).toEqual(made.createDag.warnings);
    const fine = await gqlOk<{ createDag: { warnings: string[] } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { warnings } }`, { input: { name: "fine", tasks: [tasks[0]] } }, t.admin);
    expect(fine.createDag.warnings).toEqual([]);
  });

  it("cancels a DAG run mid-run", async () => {
    const id = await createDag(t.app.url, t.admin, "cancel-me", [
      { key: "first", command: "true" },
      { key: "long", command: "sleep 30", dependsOn: ["first"] },
      { key: "last", command: "true", dependsOn: ["long"] },
    ]);
    const runId = await triggerDag(t.app.url, t.admin, id);
    await waitFor(async () => (await readDagRun(t.app.url, t.admin, runId)).tasks.find((x) => x.key === "long")?.run?.status === "RUNNING", 30_000);
    const cancelled = await gqlOk<{ cancelDagRun: { id: string; cancelRequested: boolean } }>(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id cancelRequested } }`, { id: runId }, t.admin);
    expect(cancelled.cancelDagRun.cancelRequested).toBe(true);
    const run = await finishedDagRun(t.app.url, t.admin, runId);
    expect(run.status).toBe("CANCELLED");
    expect(row(run, "first").status).toBe("SUCCEEDED");
    expect(row(run, "long").status).toBe("CANCELLED");
    expect(row(run, "long").run!.status).toBe("CANCELLED");
    expect(row(run, "last").status).toBe("CANCELLED");
    expect(row(run, "last").run).toBeNull();
    // Each row it stopped says why; the one that had ended keeps none.
    for (const key of ["long", "last"]) expect(row(run, key).note).toMatch(/^cancelled with its DAG run \(cancelDagRun/);
    expect(row(run, "first").note).toBeNull();
    const again = await gql(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, t.admin);
    expect(code(again)).toBe("FAILED_PRECONDITION");
  });

  it("retries from failed: failed and upstream-failed tasks run again as new attempts, succeeded ones keep their results", async () => {
    const id = await createDag(t.app.url, t.admin, "retry-me", [
      { key: "a", command: `printf '"kept"' > "$KAIROS_RESULT"` },
      { key: "flaky", command: `test "$KAIROS_TASK_ATTEMPT" -ge 2`, dependsOn: ["a"] },
      { key: "c", command: "true", dependsOn: ["flaky"] },
    ]);
    const runId = await triggerDag(t.app.url, t.admin, id);
    const failed = await finishedDagRun(t.app.url, t.admin, runId);
    expect(failed.status).toBe("FAILED");
    expect(row(failed, "c").status).toBe("UPSTREAM_FAILED");
    const firstA = row(failed, "a").run!.id;
    await gqlOk(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id, fromFailed: true) { id status } }`, { id: runId }, t.admin);
    const run = await finishedDagRun(t.app.url, t.admin, runId);
    expect(run.status).toBe("SUCCEEDED");
    expect(row(run, "a").attempt).toBe(1);
    expect(row(run, "a").run!.id).toBe(firstA);
    expect(row(run, "a").result).toBe("kept");
    expect(row(run, "flaky").attempt).toBe(2);
    expect(row(run, "flaky").run!.id).not.toBe(row(failed, "flaky").run!.id);
    expect(row(run, "c").status).toBe("SUCCEEDED");
    const again = await gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: runId }, t.admin);
    expect(code(again)).toBe("FAILED_PRECONDITION");
  });
});

describe("validation and ownership", () => {
  it("refuses a cycle with its path, an unknown parent, and a task spec a job would refuse (prefixed by the task key)", async () => {
    const cycle = await gql(
      t.app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "cyclic", tasks: tasksInput([{ key: "extract", command: "true", dependsOn: ["transform"] }, { key: "load", command: "true", dependsOn: ["extract"] }, { key: "transform", command: "true", dependsOn: ["load"] }]) } },
      t.admin,
    );
    expect(code(cycle)).toBe("BAD_USER_INPUT");
    expect(message(cycle)).toMatch(/cycle: extract → load → transform → extract|cycle: (\w+) → (\w+) → (\w+) → \1/);
    const unknown = await gql(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: "unknown", tasks: tasksInput([{ key: "a", command: "true", dependsOn: ["nope"] }]) } }, t.admin);
    expect(code(unknown)).toBe("BAD_USER_INPUT");
    expect(message(unknown)).toContain(`"nope", which is not a task of this DAG`);
    const spec = await gql(
      t.app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "bad-spec", tasks: [{ key: "ok", spec: { kind: "COMMAND", command: "true" } }, { key: "broken", spec: { kind: "COMMAND", command: "true", env: { KAIROS_X: "1" } } }] } },
      t.admin,
    );
    expect(code(spec)).toBe("BAD_USER_INPUT");
    expect(message(spec)).toBe(`task "broken": spec.env: "KAIROS_X": names starting with KAIROS_ are reserved`);
    // The input path of the refused field, as for a job's (docs/api-errors.md).
    expect(spec.errors?.[0]?.extensions?.field).toBe("tasks[1].spec.env");
    const empty = await gql(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: "empty", tasks: [] } }, t.admin);
    expect(message(empty)).toContain("at least one task");
  });

  it("shows the DAG's order and graph, and hides another user's DAG and DAG runs (NOT_FOUND)", async () => {
    const id = await createDag(t.app.url, t.admin, "owned", [
      { key: "b", command: "true", dependsOn: ["a"] },
      { key: "a", command: "true" },
    ]);
    const dag = await gqlOk<{ dag: { topologicalOrder: string[]; graph: string; dot: string; version: number } }>(
      t.app.url,
      `query($id: ID!) { dag(id: $id) { topologicalOrder version graph dot: graph(format: DOT) } }`,
      { id },
      t.admin,
    );
    expect(dag.dag.topologicalOrder).toEqual(["a", "b"]);
    expect(dag.dag.graph).toContain("flowchart");
    expect(dag.dag.dot).toContain("digraph");
    const runId = await triggerDag(t.app.url, t.admin, id);
    const other = await makeUser(t.app, t.admin, `dag-other-${Date.now()}`);
    for (const [q, v] of [
      [`query($id: ID!) { dag(id: $id) { id } }`, { id }],
      [`query($id: ID!) { dagRun(id: $id) { id } }`, { id: runId }],
      [`mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id }],
      [`mutation($id: ID!) { deleteDag(id: $id) }`, { id }],
      [`mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }],
      [`query($id: ID!) { dagRuns(dagId: $id) { edges { node { id } } } }`, { id }],
    ] as const) {
      const r = await gql(t.app.url, q, v, other.token);
      expect([q, code(r)]).toEqual([q, "NOT_FOUND"]);
    }
    const list = await gqlOk<{ dags: { edges: unknown[] }; dagRuns: { edges: unknown[] } }>(t.app.url, `{ dags { edges { node { id } } } dagRuns { edges { node { id } } } }`, {}, other.token);
    expect(list.dags.edges).toEqual([]);
    expect(list.dagRuns.edges).toEqual([]);
    await finishedDagRun(t.app.url, t.admin, runId);
  });

  it("answers a trigger with the DAG run, its tasks and graph read when asked for", async () => {
    const id = await createDag(t.app.url, t.admin, "answered", [{ key: "a", command: "sleep 0.3" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    type Answer = { id: string; status: string; dagVersion: number; tasks: Array<{ key: string; status: string }>; graph: string };
    const answer = await gqlOk<{ triggerDag: AsRead<Answer> }>(
      t.app.url,
      `mutation($id: ID!) { triggerDag(id: $id) { id status dagVersion tasks { edges { node { key status } } } graph(format: DOT) } }`,
      { id },
      t.admin,
    );
    const r = { triggerDag: listTasks<Answer>(answer.triggerDag) };
    expect(r.triggerDag).toMatchObject({ status: "RUNNING", dagVersion: 1 });
    expect(r.triggerDag.tasks.map((x) => x.key)).toEqual(["a", "b"]);
    expect(["QUEUED", "RUNNING"]).toContain(r.triggerDag.tasks[0]!.status);
    expect(r.triggerDag.tasks[1]!.status).toBe("PENDING");
    expect(r.triggerDag.graph).toContain('label="b"');
    expect((await finishedDagRun(t.app.url, t.admin, r.triggerDag.id)).status).toBe("SUCCEEDED");
  });

  it("keeps a DAG run on the version it started with when the DAG is updated", async () => {
    const id = await createDag(t.app.url, t.admin, "versioned", [{ key: "a", command: "sleep 0.5" }, { key: "b", command: "echo old", dependsOn: ["a"] }]);
    const runId = await triggerDag(t.app.url, t.admin, id);
    const up = await gqlOk<{ updateDag: { version: number } }>(
      t.app.url,
      `mutation($id: ID!, $input: UpdateDagInput!) { updateDag(id: $id, input: $input) { version } }`,
      { id, input: { tasks: tasksInput([{ key: "a", command: "true" }, { key: "b", command: "echo new", dependsOn: ["a"] }, { key: "c", command: "true", dependsOn: ["b"] }]) } },
      t.admin,
    );
    expect(up.updateDag.version).toBe(2);
    const run = await finishedDagRun(t.app.url, t.admin, runId);
    expect(run.tasks.map((x) => x.key)).toEqual(["a", "b"]);
    expect(row(run, "b").run!.outputTail).toBe("old\n");
    // The next run is on the new version (definitions are cached per version, never per DAG).
    const next = await finishedDagRun(t.app.url, t.admin, await triggerDag(t.app.url, t.admin, id));
    expect(next.tasks.map((x) => x.key)).toEqual(["a", "b", "c"]);
    expect(row(next, "b").run!.outputTail).toBe("new\n");
    // Each version's definition is stored once, apart from the DAG runs, which hold no copy; the
    // first run still reads (and draws) the version it ran.
    const { c } = t.app.services.mongo;
    expect((await c.dagDefinitions.find({ dagId: id }).toArray()).map((d) => d.version).sort()).toEqual([1, 2]);
    expect(await c.dagRuns.countDocuments({ dagId: id, definition: { $exists: true } })).toBe(0);
    const drawn = await gqlOk<{ dagRun: { graph: string } }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { graph(format: DOT) } }`, { id: runId }, t.admin);
    expect(drawn.dagRun.graph).toContain('label="b"');
    expect(drawn.dagRun.graph).not.toContain('label="c"');
  });
});

describe("events and query cost", () => {
  it("streams every task transition of a DAG run and its end through dagRunUpdated", async () => {
    const id = await createDag(t.app.url, t.admin, "streamed", [
      { key: "a", command: "true" },
      { key: "bad", command: "exit 1" },
      { key: "b", command: "true", dependsOn: ["a", "bad"] },
    ]);
    type Ev = { dagRunUpdated: { dagRunId: string; status: string; task: { key: string; status: string; runStatus: string | null } | null } };
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const sub = collect<Ev>(client, `subscription($dagId: ID) { dagRunUpdated(dagId: $dagId) { dagRunId status task { key status runStatus } } }`, { dagId: id }, (evs) => evs.some((e) => e.dagRunUpdated.task === null), 20_000);
      await sub.ready;
      const runId = await triggerDag(t.app.url, t.admin, id);
      const { events, errors } = await sub.done;
      expect(errors).toEqual([]);
      expect(events.every((e) => e.dagRunUpdated.dagRunId === runId)).toBe(true);
      const of = (k: string) => events.filter((e) => e.dagRunUpdated.task?.key === k).map((e) => e.dagRunUpdated.task!);
      expect(of("a").map((x) => x.runStatus)).toEqual(expect.arrayContaining(["QUEUED", "RUNNING", "SUCCEEDED"]));
      expect(of("bad").some((x) => x.runStatus === "FAILED")).toBe(true);
      expect(of("b").map((x) => x.status)).toContain("UPSTREAM_FAILED");
      expect(events.at(-1)!.dagRunUpdated).toMatchObject({ status: "FAILED", task: null });
    } finally {
      await client.dispose();
    }
  });

  it("dagRunUpdated(dagRunId) starts with the DAG run's status as it is and completes after its end, at once for one that had ended", async () => {
    const id = await createDag(t.app.url, t.admin, "streamed-one", [{ key: "a", command: "sleep 1" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    type Ev = { dagRunUpdated: { status: string; task: { key: string; status: string } | null } };
    const SUB = `subscription($r: ID) { dagRunUpdated(dagRunId: $r) { status task { key status } } }`;
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const runId = await triggerDag(t.app.url, t.admin, id);
      // Subscribed while it runs: its status first, then its tasks, its end, and the stream completes
      // (`until` never ends it: only the server's completion or the timeout does).
      const started = Date.now();
      const live = await collect<Ev>(client, SUB, { r: runId }, () => false, 30_000).done;
      expect(live.errors).toEqual([]);
      expect(Date.now() - started).toBeLessThan(25_000);
      expect(live.events[0]!.dagRunUpdated).toEqual({ status: "RUNNING", task: null });
      expect(live.events.at(-1)!.dagRunUpdated).toEqual({ status: "SUCCEEDED", task: null });
      expect(live.events.some((e) => e.dagRunUpdated.task?.key === "b")).toBe(true);
      // Subscribed after its end (a fast DAG run, an old one): its end, and done, not a silent wait.
      const after = Date.now();
      const ended = await collect<Ev>(client, SUB, { r: runId }, () => false, 30_000).done;
      expect(ended.errors).toEqual([]);
      expect(ended.events.map((e) => e.dagRunUpdated)).toEqual([{ status: "SUCCEEDED", task: null }]);
      expect(Date.now() - after).toBeLessThan(25_000);
    } finally {
      await client.dispose();
    }
  });

  it("refuses a subscription to an empty id (NOT_FOUND) or to a DAG run of another DAG (BAD_USER_INPUT), rather than streaming every run", async () => {
    // An empty id was taken as no argument: dagRunUpdated(dagRunId: "") streamed all the caller's
    // DAG runs, runUpdated(jobId: "") all their runs; a dagId with another DAG's dagRunId, nothing.
    const a = await createDag(t.app.url, t.admin, "sub-a", [{ key: "a", command: "true" }]);
    const b = await createDag(t.app.url, t.admin, "sub-b", [{ key: "a", command: "true" }]);
    const runOfB = await triggerDag(t.app.url, t.admin, b);
    const client = wsClient(t.app.wsUrl, t.admin);
    const refusal = async (query: string, variables: Record<string, unknown>) => {
      const { events, errors } = await collect<unknown>(client, query, variables, () => true, 5_000).done;
      expect(events).toEqual([]);
      return errors as Array<{ message: string; extensions?: { code?: string; field?: string } }>;
    };
    try {
      const DAG_SUB = `subscription($dagId: ID, $dagRunId: ID) { dagRunUpdated(dagId: $dagId, dagRunId: $dagRunId) { status } }`;
      for (const vars of [{ dagRunId: "" }, { dagId: "" }]) {
        const [e] = await refusal(DAG_SUB, vars);
        expect(e?.extensions?.code, JSON.stringify(e)).toBe("NOT_FOUND");
      }
      const [mixed] = await refusal(DAG_SUB, { dagId: a, dagRunId: runOfB });
      expect(mixed?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "dagRunId" });
      expect(mixed?.message).toBe(`dagRunId: DAG run ${runOfB} is a run of DAG ${b}, not of DAG ${a}, so no event would match both: give one of them, or both of the same DAG`);
      for (const vars of [{ jobId: "" }, { runId: "" }]) {
        const [e] = await refusal(`subscription($jobId: ID, $runId: ID) { runUpdated(jobId: $jobId, runId: $runId) { id } }`, vars);
        expect(e?.extensions?.code, JSON.stringify(e)).toBe("NOT_FOUND");
      }
    } finally {
      await client.dispose();
    }
    await finishedDagRun(t.app.url, t.admin, runOfB);
  });

  it("charges DagRun.tasks by its size, so the contract's read passes and a page of DAG runs with their tasks is refused", async () => {
    const id = await createDag(t.app.url, t.admin, "costed", [{ key: "a", command: "true" }]);
    const runId = await triggerDag(t.app.url, t.admin, id);
    const ok = await gql(t.app.url, `query($id: ID!) { dagRun(id: $id) { status tasks { edges { node { key status run { startedAt finishedAt } } } } } }`, { id: runId }, t.admin);
    expect(ok.errors).toBeUndefined();
    const heavy = await gql(t.app.url, `{ dagRuns(first: 100) { edges { node { tasks { edges { node { key status run { startedAt } } } } } } } }`, {}, t.admin);
    expect(heavy.errors?.[0]?.message).toMatch(/cost limit/);
    const badFirst = await gql(t.app.url, `query($id: ID!) { dagRun(id: $id) { tasks(first: 0) { edges { node { key } } } } }`, { id: runId }, t.admin);
    expect(code(badFirst)).toBe("BAD_USER_INPUT");
    await finishedDagRun(t.app.url, t.admin, runId);
  });
});

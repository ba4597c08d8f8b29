/**
 * Reads that pulled a user's largest stored text into the API whatever the query asked for
 * (docs/security.md, "Reads of large documents"): a job's spec (a script's source or an HTTP
 * body up to 1 MiB, a command, argv and env up to 64 KiB each), a run's copy of it, a DAG's tasks
 * (up to ~2 MiB). A listing of 100 such jobs read 100 MiB per alias: 20 aliases of
 * `jobs(first: 100) { edges { node { id } } }` (cost ~4,000) took 633 MB of the API's memory
 * over 30 jobs of 1 MiB scripts, with `spec { source }` 1.4 GB and an INTERNAL_SERVER_ERROR.
 */
import { describe, expect, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { documentsFound } from "../helpers/reads.js";
import { gql, gqlOk } from "../dag/helpers.js";

const t = useTestApp();

let users = 0;
const user = () => makeUser(t.app, t.admin, `large-reads-${Date.now()}-${users++}`);

/** Bytes of the documents `collection.find` answers while `body` runs. */
const bytesFound = async (collection: unknown, body: () => Promise<void>): Promise<number> => (await documentsFound(collection, body)).bytes;

const createJob = (token: string, name: string, spec: Record<string, unknown>) =>
  gqlOk<{ createJob: { id: string } }>(
    t.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, paused: true, schedule: { kind: "CRON", cron: "0 0 1 1 *" }, spec } },
    token,
  ).then((r) => r.createJob.id);

describe("jobs with large specs", () => {
  it("a listing reads no spec text it is not asked for, and the text it is asked for within 32 MiB a request", async () => {
    const u = await user();
    const source = "#" + "x".repeat(1024 * 1024 - 100) + "\necho hi\n";
    for (let i = 0; i < 40; i++) await createJob(u.token, `fat-${i}`, { kind: "SCRIPT", interpreter: "sh", source });
    const aliases = (sel: string) => Array.from({ length: 20 }, (_, i) => `a${i}: jobs(first: 100) { edges { node { ${sel} } } }`).join(" ");

    // Before: 20 × 40 MiB read for ids alone.
    let r: Awaited<ReturnType<typeof gql>> | undefined;
    const idBytes = await bytesFound(t.app.services.mongo.c.jobs, async () => {
      r = await gql(t.app.url, `{ ${aliases("id")} }`, {}, u.token);
    });
    expect(r!.errors).toBeUndefined();
    expect(idBytes).toBeLessThan(2_000_000);

    // Before: 1.4 GB of memory and INTERNAL_SERVER_ERROR (a string past V8's longest). Now the
    // text answered stops at 32 MiB: the rest is null with BAD_USER_INPUT saying why.
    let big: Awaited<ReturnType<typeof gql>> | undefined;
    const sourceBytes = await bytesFound(t.app.services.mongo.c.jobs, async () => {
      big = await gql(t.app.url, `{ ${aliases("spec { source }")} }`, {}, u.token);
    });
    // Read in chunks of 16 jobs until past the budget: 32 MiB and at most one chunk more.
    expect(sourceBytes).toBeLessThan(50 * 1024 * 1024);
    expect(JSON.stringify(big).length).toBeLessThan(40 * 1024 * 1024);
    expect(big!.errors!.length).toBeGreaterThan(0);
    expect(big!.errors!.every((e) => e.extensions?.code === "BAD_USER_INPUT" && e.extensions?.field === "spec")).toBe(true);
    expect(big!.errors![0]!.message).toMatch(/more than 33554432 bytes \(32 MiB\) of commands, argv, env, scripts and HTTP bodies; ask for fewer jobs/);

    // A page that fits reads its text whole.
    const page = await gqlOk<{ jobs: { edges: Array<{ node: { spec: { source: string } } }> } }>(t.app.url, `{ jobs(first: 20) { edges { node { spec { source } } } } }`, {}, u.token);
    expect(page.jobs.edges).toHaveLength(20);
    for (const e of page.jobs.edges) expect(e.node.spec.source).toBe(source);
  });

  it("each kind's spec text reads back as it was given, in listings, by id and through a run's job", async () => {
    const u = await user();
    const ids = {
      command: await createJob(u.token, "c", { kind: "COMMAND", command: "echo a", env: { A: "1", B: "two" } }),
      argv: await createJob(u.token, "v", { kind: "COMMAND", argv: ["echo", "b"] }),
      script: await createJob(u.token, "s", { kind: "SCRIPT", interpreter: "python3", source: "print(1)", args: ["--x", "y"] }),
      http: await createJob(u.token, "h", { kind: "HTTP", http: { method: "PUT", url: "https://example.com/x", headers: { "X-A": "b" }, body: "{\"k\":1}" } }),
    };
    const sel = `id spec { kind command argv env source args interpreter http { method url headers body successStatuses } }`;
    const listed = await gqlOk<{ jobs: { edges: Array<{ node: { id: string; spec: Record<string, unknown> } }> } }>(t.app.url, `{ jobs(first: 10) { edges { node { ${sel} } } } }`, {}, u.token);
    const byId = new Map(listed.jobs.edges.map((e) => [e.node.id, e.node.spec]));
    const expected: Record<string, Record<string, unknown>> = {
      [ids.command]: { kind: "COMMAND", command: "echo a", argv: null, env: { A: "1", B: "two" }, source: null, args: null, interpreter: null, http: null },
      [ids.argv]: { kind: "COMMAND", command: null, argv: ["echo", "b"], env: {}, source: null, args: null, interpreter: null, http: null },
      [ids.script]: { kind: "SCRIPT", command: null, argv: null, env: {}, source: "print(1)", args: ["--x", "y"], interpreter: "python3", http: null },
      [ids.http]: { kind: "HTTP", command: null, argv: null, env: {}, source: null, args: null, interpreter: null, http: { method: "PUT", url: "https://example.com/x", headers: { "X-A": "b" }, body: "{\"k\":1}", successStatuses: ["2xx"] } },
    };
    for (const [id, spec] of Object.entries(expected)) {
      expect(byId.get(id), id).toEqual(spec);
      const one = await gqlOk<{ job: { spec: Record<string, unknown> } }>(t.app.url, `query($id: ID!) { job(id: $id) { ${sel} } }`, { id }, u.token);
      expect(one.job.spec, id).toEqual(spec);
    }
  });
});

describe("runs", () => {
  it("run(id) and deadLetters read no run's copy of its spec", async () => {
    const u = await user();
    const source = "#" + "x".repeat(1024 * 1024 - 100) + "\nexit 3\n";
    const jobId = await createJob(u.token, "fat-run", { kind: "SCRIPT", interpreter: "sh", source });
    const runId = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, u.token)).triggerJob.id;
    const bytes = await bytesFound(t.app.services.mongo.c.runs, async () => {
      const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: run(id: "${runId}") { id status }`).join(" ");
      await gqlOk(t.app.url, `{ ${aliases} deadLetters(first: 100) { edges { node { id } } } }`, {}, u.token);
    });
    expect(bytes).toBeLessThan(100_000);
  });
});

describe("DAGs with large definitions", () => {
  it("a listing reads no DAG's tasks unless asked for, and a DAG's tasks, order and graph still read whole", async () => {
    const u = await user();
    const pad = "x".repeat(60_000);
    const tasks = Array.from({ length: 28 }, (_, i) => ({ key: `t${i}`, dependsOn: i ? [`t${i - 1}`] : [], spec: { kind: "COMMAND", command: `: ${pad}; true` } }));
    let id = "";
    for (let i = 0; i < 4; i++) id = (await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: `fat-${i}`, tasks } }, u.token)).createDag.id;
    // Before: every alias read every DAG whole (1.7 MB each): 19 × 100 DAGs of 2 MiB would be 4 GB.
    const listed = await bytesFound(t.app.services.mongo.c.dags, async () => {
      const aliases = Array.from({ length: 19 }, (_, i) => `a${i}: dags(first: 100) { edges { node { id name version } } }`).join(" ");
      await gqlOk(t.app.url, `{ ${aliases} }`, {}, u.token);
    });
    expect(listed).toBeLessThan(200_000);
    const one = await gqlOk<{ dag: { tasks: Array<{ key: string; spec: { command: string } }> } }>(t.app.url, `query($id: ID!) { dag(id: $id) { tasks { key spec { command } } } }`, { id }, u.token);
    expect(one.dag.tasks.map((x) => x.key)).toEqual(tasks.map((x) => x.key));
    expect(one.dag.tasks[5]!.spec.command).toBe(`: ${pad}; true`);
    const drawn = await gqlOk<{ dag: { topologicalOrder: string[]; graph: string } }>(t.app.url, `query($id: ID!) { dag(id: $id) { topologicalOrder graph(format: DOT) } }`, { id }, u.token);
    expect(drawn.dag.topologicalOrder).toEqual(tasks.map((x) => x.key));
    expect(drawn.dag.graph).toMatch(/^digraph/);
    // A listing's tasks when asked for (one DAG: a DAG's tasks cost a DAG's size).
    const page = await gqlOk<{ dags: { edges: Array<{ node: { tasks: Array<{ key: string }> } }> } }>(t.app.url, `{ dags(first: 1) { edges { node { tasks { key } } } } }`, {}, u.token);
    expect(page.dags.edges[0]!.node.tasks).toHaveLength(28);
  });
});

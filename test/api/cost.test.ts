/**
 * The cost model (src/api/cost.ts) on the real schema: list fields cost by their first/count,
 * connections' edges are not charged twice, introspection is free; and the client address that
 * per-address limits key on (src/api/client-address.ts).
 */
import "reflect-metadata";
import { readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { parse, type GraphQLSchema } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { clientAddress } from "../../src/api/client-address.js";
import { ASSUMED_LIST_SIZE, FORECAST_COST, operationCost } from "../../src/api/cost.js";
import { MAX_DAG_TASKS } from "../../src/dag/index.js";
import { buildKairosSchema } from "../../src/resolvers/index.js";

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildKairosSchema();
});

const cost = (q: string, variables?: Record<string, unknown>) => operationCost(schema, parse(q), variables);

describe("cost model", () => {
  it("charges nextFires(count: N) about N, and its default count 5", () => {
    expect(cost(`{ job(id: "x") { nextFires(count: 100) { at } } }`)).toBe(1 + (1 + 100 * 1));
    expect(cost(`{ job(id: "x") { nextFires { at local } } }`)).toBe(1 + (1 + 5 * 2));
  });

  it("multiplies what is below a connection by its first (20 when omitted), without charging edges again", () => {
    expect(cost(`{ runs(jobId: "x", first: 10) { edges { node { id status } } } }`)).toBe(1 + 10 * (1 + (1 + 2)));
    expect(cost(`{ runs(jobId: "x") { edges { node { id } } } }`)).toBe(1 + 20 * (1 + (1 + 1)));
    expect(cost(`query($n: Int) { runs(jobId: "x", first: $n) { edges { node { id } } } }`, { n: 3 })).toBe(1 + 3 * 3);
    const nested = cost(`{ jobs(first: 100) { edges { node { runs(first: 100) { edges { node { id } } } } } } }`);
    expect(nested).toBe(1 + 100 * (1 + (1 + (1 + 100 * 3))));
  });

  it("charges a search of runs by its first, whatever its filter, as a job's runs", () => {
    const job = cost(`{ runs(jobId: "x", status: FAILED, first: 50) { edges { node { id status } } } }`);
    expect(cost(`{ runs(status: FAILED, first: 50) { edges { node { id status } } } }`)).toBe(job);
    expect(cost(`{ runs(filter: {name: "x", scheduledFrom: "2026-01-01T00:00:00Z", dagId: "d"}, first: 50) { edges { node { id status } } } }`)).toBe(job);
    expect(cost(`{ runs { edges { node { id } } } }`)).toBe(1 + 20 * (1 + (1 + 1)));
  });

  it("charges cancelRuns and retryRuns per id, and previewSchedule by its count, its nextFires once", () => {
    const ids = Array.from({ length: 100 }, (_, i) => `r${i}`);
    expect(cost(`mutation($ids: [ID!]!) { cancelRuns(ids: $ids) { id run { id status } error { code message } } }`, { ids })).toBe(1 + 100 * (1 + (1 + 2) + (1 + 2)));
    expect(cost(`mutation { retryRuns(ids: ["a", "b"]) { id } }`)).toBe(1 + 2 * 1);
    expect(cost(`{ previewSchedule(schedule: {kind: CRON, cron: "* * * * *"}, count: 100) { description nextFires { at local dst } } }`)).toBe(1 + 100 * (1 + (1 + 3)));
    expect(cost(`{ previewSchedule(schedule: {kind: INTERVAL, every: "PT1M"}) { nextFires { at } } }`)).toBe(1 + 5 * (1 + 1));
  });

  it("charges an unsized list of objects as ASSUMED_LIST_SIZE items, scalar lists as one field", () => {
    expect(cost(`mutation { backfillDag(id: "x", from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z") { id status } }`)).toBe(1 + ASSUMED_LIST_SIZE * 2);
    expect(cost(`{ nodes(first: 7) { edges { node { id name } } } }`)).toBe(1 + 7 * (2 + 2));
    expect(cost(`{ job(id: "x") { tags } }`)).toBe(2);
  });

  it("charges a DAG's tasks, order and graph as a DAG of MAX_DAG_TASKS (once each, not per field below them)", () => {
    expect(cost(`{ dag(id: "x") { graph } }`)).toBe(1 + (1 + MAX_DAG_TASKS));
    expect(cost(`{ dag(id: "x") { tasks { key spec { command } } } }`)).toBe(1 + (1 + MAX_DAG_TASKS + 3));
    expect(cost(`{ dags(first: 20) { edges { node { graph } } } }`)).toBeGreaterThan(20 * MAX_DAG_TASKS);
  });

  it("keeps every operation of the typed client's client/dags.graphql within the default cost limit (10000)", () => {
    const doc = parse(readFileSync(join(import.meta.dirname, "../../client/dags.graphql"), "utf8"));
    const vars = { id: "x", input: { name: "x", tasks: [] }, from: "2020-01-01T00:00:00Z", to: "2020-01-01T00:00:00Z" };
    const costs = doc.definitions.flatMap((d) => (d.kind === "OperationDefinition" ? [[d.name!.value, operationCost(schema, doc, vars, d.name!.value)] as const] : []));
    expect(costs.filter(([, c]) => c > 10_000)).toEqual([]);
  });

  it("keeps the typed client's pages of a DAG run's task rows (console, CLI) within the default cost limit (10000)", () => {
    // The client's files as one document (an operation may spread a fragment of another file).
    const dir = join(import.meta.dirname, "../../client");
    const doc = parse(readdirSync(dir).filter((f) => f.endsWith(".graphql")).map((f) => readFileSync(join(dir, f), "utf8")).join("\n"));
    const pages = ["ConsoleDagRunStates", "ConsoleDagRunTimeline", "CliDagRun", "CliDagRunWhy", "DagRun"];
    const costs = pages.map((name) => [name, operationCost(schema, doc, { id: "x" }, name)] as const);
    expect(costs.filter(([, c]) => c > 10_000)).toEqual([]);
  });

  it("charges a forecast FORECAST_COST more: two fit in the default limit (10000), the console's and CLI's included; three do not", () => {
    expect(cost(`{ forecast { jobsRead } }`)).toBe(1 + FORECAST_COST + 1);
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: forecast(within: "PT${i + 1}H") { jobsRead }`).join(" ")} }`;
    expect(cost(aliases(2))).toBeLessThanOrEqual(10_000);
    expect(cost(aliases(3))).toBeGreaterThan(10_000);
    const dir = join(import.meta.dirname, "../../client");
    const doc = parse(readdirSync(dir).filter((f) => f.endsWith(".graphql")).map((f) => readFileSync(join(dir, f), "utf8")).join("\n"));
    const costs = ["ConsoleForecast", "CliForecast"].map((name) => [name, operationCost(schema, doc, { within: "PT24H" }, name)] as const);
    expect(costs.filter(([, c]) => c > 10_000 || c < FORECAST_COST)).toEqual([]);
  });

  it("keeps the cluster figures' pages of nodes within the limits: the console's subscription (1000 at every push), the CLI's query (10000)", () => {
    const dir = join(import.meta.dirname, "../../client");
    const doc = parse(readdirSync(dir).filter((f) => f.endsWith(".graphql")).map((f) => readFileSync(join(dir, f), "utf8")).join("\n"));
    const live = operationCost(schema, doc, { window: "PT1H" }, "ConsoleClusterStats");
    const cli = operationCost(schema, doc, { window: "PT1H" }, "CliClusterStats");
    expect(live).toBeLessThanOrEqual(1_000);
    expect(cli).toBeLessThanOrEqual(10_000);
    // Sized by the page: the CLI's 100 nodes cost more than the console's 50.
    expect(cli).toBeGreaterThan(live + 50 * 10);
  });

  it("leaves introspection free", () => {
    expect(cost(`{ __schema { types { name fields { name } } } }`)).toBe(0);
    expect(cost(`{ me { __typename id } }`)).toBe(2);
  });
});

describe("client address", () => {
  const req = (peer: string, xff?: string) => ({ socket: { remoteAddress: peer }, headers: xff ? { "x-forwarded-for": xff } : {} }) as unknown as IncomingMessage;

  it("is the TCP peer unless proxies are trusted, then the address the nearest trusted proxy saw", () => {
    expect(clientAddress(req("10.0.0.1", "1.2.3.4"), 0)).toBe("10.0.0.1");
    expect(clientAddress(req("10.0.0.1", "6.6.6.6, 1.2.3.4"), 1)).toBe("1.2.3.4");
    expect(clientAddress(req("10.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.2"), 2)).toBe("1.2.3.4");
    // More trusted hops than the chain has: the farthest address there is.
    expect(clientAddress(req("10.0.0.1", "1.2.3.4"), 5)).toBe("1.2.3.4");
    expect(clientAddress(req("10.0.0.1"), 1)).toBe("10.0.0.1");
  });
});

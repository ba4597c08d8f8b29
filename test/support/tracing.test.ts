/**
 * Tracing of a run's path (issue #31): a dev app exporting to a local OTLP/HTTP receiver (JSON)
 * gives one trace per run holding the API request, the fire, the claim, the start and the end,
 * parent to child; the app's log lines inside a span carry its ids; with tracing off nothing is
 * stored on the run.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/support/log.js";
import { gqlOk, login } from "../helpers/graphql.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  service: string;
}

/** OTLP/JSON ids are hex; a protobuf-to-JSON mapping would give base64: both read as hex. */
const hex = (v: unknown): string => (typeof v !== "string" || v === "" ? "" : /^[0-9a-f]+$/.test(v) ? v : Buffer.from(v, "base64").toString("hex"));

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: AnyValue[] } };
const value = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values.map(value);
const attrs = (list: Array<{ key: string; value: AnyValue }> | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/** A tiny OTLP/HTTP receiver on loopback: decodes each JSON export into spans. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: ExportedSpan[]; contentTypes: string[] }> {
  const spans: ExportedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      contentTypes.push(String(req.headers["content-type"]));
      if (req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)["service.name"]);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              attributes: attrs(s.attributes),
              links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
              service,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes };
}

/** Waits until `pick` finds what it looks for among the spans received (the export is batched). */
async function eventually<T>(pick: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = pick();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("tracing on (KAIROS_OTLP_ENDPOINT)", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let app: TestApp;
  let token: string;
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString("utf8").split("\n")) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    app = await startTestApp({
      env: { KAIROS_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "kairos-test", OTEL_BSP_SCHEDULE_DELAY: "100" },
      log: createLogger("info", {}, "json", sink),
    });
    token = await login(app.url, ADMIN.username, ADMIN.password);
  });
  afterAll(async () => {
    await app?.dispose();
    receiver?.server.close();
  });

  /** The spans of the trace that holds `runId`'s end span, by name, once they all arrived. */
  async function traceOfRun(runId: string, names: string[]): Promise<Map<string, ExportedSpan>> {
    const end = await eventually(() => receiver.spans.find((s) => s.name === "kairos.end" && s.attributes["kairos.run.id"] === runId), `the end span of run ${runId}`);
    return eventually(() => {
      const inTrace = receiver.spans.filter((s) => s.traceId === end.traceId);
      const byName = new Map<string, ExportedSpan>();
      for (const s of inTrace) if (!byName.has(s.name)) byName.set(s.name, s);
      return names.every((n) => byName.has(n)) ? byName : undefined;
    }, `spans ${names.join(", ")} in run ${runId}'s trace`);
  }

  it("a job's first fire: createJob → kairos.fire → claim, start, end, one trace with parent links and the run id", async () => {
    const jobId = await submitJob(app.url, token, { command: "true" });
    const run = await finishedRun(app.url, token, jobId);
    expect(run.status).toBe("SUCCEEDED");
    const t = await traceOfRun(run.id, ["graphql mutation createJob", "kairos.fire", "kairos.claim", "kairos.start", "kairos.end"]);
    const api = t.get("graphql mutation createJob")!;
    const fire = t.get("kairos.fire")!;
    expect(api.parentSpanId).toBe(""); // the request had no traceparent header: it is the root
    expect(api.service).toBe("kairos-test");
    expect(fire.parentSpanId).toBe(api.spanId);
    expect(fire.attributes).toMatchObject({ "kairos.job.id": jobId, "kairos.run.trigger": "SCHEDULE" });
    for (const n of ["kairos.claim", "kairos.start", "kairos.end"]) {
      expect(t.get(n)!.parentSpanId, n).toBe(fire.spanId);
      expect(t.get(n)!.attributes, n).toMatchObject({ "kairos.run.id": run.id, "kairos.job.id": jobId, "kairos.run.attempt": 1 });
    }
    expect(t.get("kairos.end")!.attributes).toMatchObject({ "kairos.run.status": "SUCCEEDED", "kairos.run.exit_code": 0 });
    expect(receiver.contentTypes).toContain("application/json");
    // The run document carries the fire's context: that is how the executor's spans joined it.
    expect((await app.services.mongo.c.runs.findOne({ _id: run.id }))?.traceparent).toBe(`00-${fire.traceId}-${fire.spanId}-01`);
    expect((await app.services.mongo.c.jobs.findOne({ _id: jobId }))?.traceparent).toBe(`00-${api.traceId}-${api.spanId}-01`);
  });

  it("triggerJob: the request's span is the fire's parent, and a caller's traceparent header is the request's", async () => {
    const jobId = await submitJob(app.url, token, { command: "true" });
    await finishedRun(app.url, token, jobId);
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const res = await fetch(app.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, traceparent: `00-${callerTrace}-${callerSpan}-01` },
      body: JSON.stringify({ query: `mutation($id: ID!) { triggerJob(id: $id) { id } }`, variables: { id: jobId } }),
    });
    const runId = ((await res.json()) as { data: { triggerJob: { id: string } } }).data.triggerJob.id;
    const t = await traceOfRun(runId, ["graphql mutation triggerJob", "kairos.fire", "kairos.claim", "kairos.start", "kairos.end"]);
    const api = t.get("graphql mutation triggerJob")!;
    expect(api.traceId).toBe(callerTrace);
    expect(api.parentSpanId).toBe(callerSpan);
    expect(t.get("kairos.fire")!.parentSpanId).toBe(api.spanId);
    expect(t.get("kairos.fire")!.attributes["kairos.run.trigger"]).toBe("MANUAL");
    expect(t.get("kairos.end")!.parentSpanId).toBe(t.get("kairos.fire")!.spanId);
  });

  it("a recurring job's later fire starts a trace of its own, linked to the request that created the job", async () => {
    const d = await gqlOk<{ createJob: { id: string } }>(
      app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "every-second", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { kind: "COMMAND", command: "true" } } },
      token,
    );
    const jobId = d.createJob.id;
    const fires = await eventually(() => {
      const f = receiver.spans.filter((s) => s.name === "kairos.fire" && s.attributes["kairos.job.id"] === jobId);
      return f.length >= 2 ? f : undefined;
    }, "two fires of the interval job");
    await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: jobId }, token);
    const api = receiver.spans.find((s) => s.name === "graphql mutation createJob" && fires.some((f) => f.parentSpanId === s.spanId))!;
    expect(api).toBeDefined();
    const later = fires.find((f) => f.parentSpanId === "")!;
    expect(later).toBeDefined();
    expect(later.traceId).not.toBe(api.traceId);
    expect(later.links).toContainEqual({ traceId: api.traceId, spanId: api.spanId });
  });

  it("log lines written inside a span carry its trace_id and span_id", async () => {
    const jobId = await submitJob(app.url, token, { command: "true" });
    const run = await finishedRun(app.url, token, jobId);
    const t = await traceOfRun(run.id, ["kairos.end"]);
    const end = t.get("kairos.end")!;
    const line = await eventually(() => lines.find((l) => l.msg === "attempt finished" && l.runId === run.id), "the attempt's log line");
    expect(line).toMatchObject({ trace_id: end.traceId, span_id: end.spanId });
    // Lines outside any span carry none.
    expect(lines.find((l) => l.msg === "tracing: exporting spans over OTLP/HTTP")).not.toHaveProperty("trace_id");
  });
});

describe("tracing off (no endpoint)", () => {
  let app: TestApp;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString("utf8").split("\n")) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    app = await startTestApp({ log: createLogger("info", {}, "json", sink) });
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("stores no traceparent on jobs or runs and logs no trace ids", async () => {
    expect(app.config.tracing).toBeNull();
    const token = await login(app.url, ADMIN.username, ADMIN.password);
    const jobId = await submitJob(app.url, token, { command: "true" });
    const run = await finishedRun(app.url, token, jobId);
    const stored = await app.services.mongo.c.runs.findOne({ _id: run.id });
    expect(stored).not.toBeNull();
    expect(stored).not.toHaveProperty("traceparent");
    expect(await app.services.mongo.c.jobs.findOne({ _id: jobId })).not.toHaveProperty("traceparent");
    const line = await eventually(() => lines.find((l) => l.msg === "attempt finished" && l.runId === run.id), "the attempt's log line");
    expect(line).not.toHaveProperty("trace_id");
  });
});

/**
 * Clean errors at the HTTP edge (issue #12): malformed JSON, an oversize body, a wrong content
 * type or method, an unknown route — every answer is the GraphQL error envelope in JSON with a
 * code, never Express's HTML page or a stack trace, and no response says X-Powered-By.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { raw, sibling, type RawResponse } from "../helpers/http.js";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.dispose();
});

/** The envelope with one error of `code`, as JSON, and nothing that leaks internals. */
function expectEnvelope(r: RawResponse, status: number, code: string): string {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.headers.get("x-powered-by")).toBeNull();
  expect(r.text).not.toMatch(/<html|<!DOCTYPE|<pre>/i);
  expect(r.text).not.toMatch(/\s+at [\w.<>]+ \(|node_modules|\.ts:\d+|stacktrace/);
  expect(r.json).toEqual({ errors: [expect.objectContaining({ message: expect.any(String), extensions: expect.objectContaining({ code }) })] });
  return r.json.errors[0].message as string;
}

const post = (body: string | Buffer, contentType = "application/json") =>
  raw(app.url, { method: "POST", headers: { "content-type": contentType }, body });

describe("the HTTP error envelope", () => {
  it("answers a body that is not JSON with 400 BAD_REQUEST", async () => {
    expect(expectEnvelope(await post("{not json"), 400, "BAD_REQUEST")).toMatch(/not valid JSON/);
    expect(expectEnvelope(await post('{"query": '), 400, "BAD_REQUEST")).toMatch(/not valid JSON/);
  });

  it("answers a body over 2 MiB with 413 BAD_REQUEST naming the limit", async () => {
    const big = JSON.stringify({ query: `{ me { id } }`, variables: { pad: "x".repeat(2_200_000) } });
    const message = expectEnvelope(await post(big), 413, "BAD_REQUEST");
    expect(message).toMatch(/larger than 2097152 bytes \(KAIROS_MAX_BODY_BYTES\)/);
  });

  it("answers a wrong content type with 415 and a wrong method with 405", async () => {
    const query = JSON.stringify({ query: "{ __typename }" });
    expect(expectEnvelope(await post(query, "text/plain"), 415, "BAD_REQUEST")).toMatch(/Content-Type: application\/json \(got text\/plain\)/);
    expectEnvelope(await post("query={__typename}", "application/x-www-form-urlencoded"), 415, "BAD_REQUEST");
    expectEnvelope(await raw(app.url, { method: "POST", body: query }), 415, "BAD_REQUEST");
    const put = await raw(app.url, { method: "PUT", headers: { "content-type": "application/json" }, body: query });
    expectEnvelope(put, 405, "BAD_REQUEST");
    expect(put.headers.get("allow")).toBe("GET, POST");
  });

  it("answers an unknown route with 404 NOT_FOUND, for any method", async () => {
    expect(expectEnvelope(await raw(sibling(app.url, "/nope")), 404, "NOT_FOUND")).toMatch(/GET \/nope/);
    expectEnvelope(await raw(sibling(app.url, "/graphql/extra"), { method: "POST", body: "x" }), 404, "NOT_FOUND");
    expectEnvelope(await raw(sibling(app.url, "/healthz"), { method: "DELETE" }), 404, "NOT_FOUND");
  });

  it("answers malformed GraphQL requests in the envelope too", async () => {
    expectEnvelope(await post(JSON.stringify({ nothing: 1 })), 400, "BAD_REQUEST");
    expectEnvelope(await post(JSON.stringify({ query: "{ me { id " })), 400, "GRAPHQL_PARSE_FAILED");
    expectEnvelope(await post(JSON.stringify({ query: "{ nope }" })), 400, "GRAPHQL_VALIDATION_FAILED");
    // A GET query is served (with Apollo's CSRF header), a GET without one is refused in the envelope.
    const get = await raw(`${app.url}?query=${encodeURIComponent("{ __typename }")}`, { headers: { "apollo-require-preflight": "1" } });
    expect(get.json).toEqual({ data: { __typename: "Query" } });
    expectEnvelope(await raw(app.url), 400, "BAD_REQUEST");
  });

  it("answers a subscription sent over HTTP with 400 BAD_REQUEST saying it is served over WebSocket", async () => {
    // It used to reach the subscription's resolver without an event: INTERNAL_SERVER_ERROR, and an error log.
    for (const query of ["subscription { runUpdated { id } }", 'subscription { dagRunUpdated(dagRunId: "x") { status } }']) {
      expect(expectEnvelope(await post(JSON.stringify({ query })), 400, "BAD_REQUEST")).toMatch(/served over WebSocket \(graphql-ws/);
    }
    const named = JSON.stringify({ query: "query Q { __typename } subscription S { runUpdated { id } }", operationName: "S" });
    expectEnvelope(await post(named), 400, "BAD_REQUEST");
    expect((await post(JSON.stringify({ query: "query Q { __typename } subscription S { runUpdated { id } }", operationName: "Q" }))).json).toEqual({
      data: { __typename: "Query" },
    });
  });

  it("never says X-Powered-By, on success either", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const r = await raw(sibling(app.url, path));
      expect(r.status).toBe(200);
      expect(r.headers.get("x-powered-by")).toBeNull();
    }
    const ok = await post(JSON.stringify({ query: "{ __typename }" }));
    expect(ok.json).toEqual({ data: { __typename: "Query" } });
    expect(ok.headers.get("x-powered-by")).toBeNull();
  });

  it("closes a WebSocket whose message is over the body limit (1009, message too big)", async () => {
    const ws = new WebSocket(app.wsUrl, "graphql-transport-ws");
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    ws.send(JSON.stringify({ type: "connection_init", payload: { pad: "x".repeat(2_200_000) } }));
    expect(await closed).toBe(1009);
  });
});

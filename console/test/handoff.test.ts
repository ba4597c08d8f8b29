/**
 * The hand-over of the console's first request (console/src/boot/handoff.ts): the early script's
 * answer is taken once, only by a request for the same operation, variables and credential.
 */
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson, offerFirstQuery, takeFirstQuery } from "../src/boot/handoff";

const variables = { jobId: null, status: "FAILED", filter: { pool: "gpu" }, first: 100, after: null };
const offer = (at = Date.now()) => {
  const response = Promise.resolve(new Response('{"data":{}}'));
  offerFirstQuery({ operationName: "ConsoleRunsSearch", variables, credential: "tok", at, response });
  return response;
};
/** A body as urql sends it: its own key order, the query text, extensions. */
const body = (over: Record<string, unknown> = {}) => JSON.stringify({ query: "query ConsoleRunsSearch { … }", operationName: "ConsoleRunsSearch", variables: { after: null, filter: { pool: "gpu" }, first: 100, jobId: null, status: "FAILED" }, ...over });

afterEach(() => {
  // Nothing offered is left for the next test.
  takeFirstQuery(body(), "Bearer tok");
});

describe("console: the first request's hand-over", () => {
  it("compares variables whatever their key order, leaving out undefined", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }], e: null })).toBe('{"a":[{"d":2}],"b":1,"e":null}');
    expect(canonicalJson(variables)).toBe(canonicalJson({ after: null, first: 100, filter: { pool: "gpu" }, status: "FAILED", jobId: null }));
  });

  it("the same operation, variables and credential take the offered answer, once", async () => {
    const response = offer();
    expect(takeFirstQuery(body(), "Bearer tok")).toBe(response);
    expect(takeFirstQuery(body(), "Bearer tok")).toBeNull();
  });

  it("another operation, other variables, another credential or no body go to the network, and leave the offer", () => {
    const response = offer();
    expect(takeFirstQuery(body({ operationName: "ConsoleNodeSuggestions", variables: {} }), "Bearer tok")).toBeNull();
    expect(takeFirstQuery(body({ variables: { ...variables, status: "SUCCEEDED" } }), "Bearer tok")).toBeNull();
    expect(takeFirstQuery(body({ variables: { ...variables, after: "cursor" } }), "Bearer tok")).toBeNull();
    expect(takeFirstQuery(body(), "Bearer other")).toBeNull();
    expect(takeFirstQuery(body(), null)).toBeNull();
    expect(takeFirstQuery(undefined, "Bearer tok")).toBeNull();
    expect(takeFirstQuery("not json", "Bearer tok")).toBeNull();
    expect(takeFirstQuery(body(), "Bearer tok")).toBe(response);
  });

  it("an answer offered more than 15 s ago is not used, and is dropped", () => {
    offer(Date.now() - 16_000);
    expect(takeFirstQuery(body(), "Bearer tok")).toBeNull();
    offer(Date.now() - 16_000);
    takeFirstQuery(body(), "Bearer tok");
    const fresh = offer();
    expect(takeFirstQuery(body(), "Bearer tok")).toBe(fresh);
  });
});

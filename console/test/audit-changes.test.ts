/**
 * The audit view's diff (console/src/views/audit/changes.ts) over the shapes the trail stores
 * (docs/audit.md): an update's changed fields, a create's whole object, a delete's whole document,
 * nested fields, the markers of a redacted secret, a payload digest and a side too large to keep,
 * and the address filters it is opened with (filters.ts).
 */
import { describe, expect, it } from "vitest";
import { changesOf, digestOf, MAX_CHANGES, REDACTED, valueText } from "../src/views/audit/changes";
import { auditFilter, filtersFromSearch, filtersToSearch, ignoredFilters, MAX_ACTIONS, NO_FILTERS, parseActions } from "../src/views/audit/filters";

describe("audit changes", () => {
  it("an update: each changed field with both sides", () => {
    expect(changesOf({ paused: false, priority: 1 }, { paused: true, priority: 5 })).toEqual([
      { path: "paused", kind: "changed", before: false, after: true },
      { path: "priority", kind: "changed", before: 1, after: 5 },
    ]);
  });

  it("a create: every field of the new object, added; nested objects walked", () => {
    expect(changesOf(null, { name: "j", spec: { command: "true", env: { DB_PASSWORD: REDACTED } } })).toEqual([
      { path: "name", kind: "added", before: undefined, after: "j" },
      { path: "spec.command", kind: "added", before: undefined, after: "true" },
      { path: "spec.env.DB_PASSWORD", kind: "added", before: undefined, after: REDACTED },
    ]);
  });

  it("a delete: every field of the document, removed", () => {
    expect(changesOf({ id: "1", tags: ["a", "b"] }, null)).toEqual([
      { path: "id", kind: "removed", before: "1", after: undefined },
      { path: "tags", kind: "removed", before: ["a", "b"], after: undefined },
    ]);
  });

  it("inside nested objects only what differs; a field gone or new; null is a value", () => {
    const rows = changesOf({ spec: { command: "a", timeout: 5, pool: "x" }, limit: null }, { spec: { command: "b", timeout: 5, retries: 2 }, limit: 3 });
    expect(rows).toEqual([
      { path: "spec.command", kind: "changed", before: "a", after: "b" },
      { path: "spec.pool", kind: "removed", before: "x", after: undefined },
      { path: "spec.retries", kind: "added", before: undefined, after: 2 },
      { path: "limit", kind: "changed", before: null, after: 3 },
    ]);
  });

  it("arrays and digests are compared whole, not walked", () => {
    const d1 = { chars: 10, sha256: "aa" };
    const d2 = { chars: 12, sha256: "bb" };
    expect(changesOf({ body: d1, tags: ["a"] }, { body: d2, tags: ["a", "b"] })).toEqual([
      { path: "body", kind: "changed", before: d1, after: d2 },
      { path: "tags", kind: "changed", before: ["a"], after: ["a", "b"] },
    ]);
    expect(changesOf({ body: d1 }, { body: d1 })).toEqual([]);
  });

  it("a value that is not an object (a bulk call's list, a boolean) is one row for the whole", () => {
    expect(changesOf(null, [{ id: "r1" }])).toEqual([{ path: "", kind: "added", before: undefined, after: [{ id: "r1" }] }]);
    expect(changesOf(null, null)).toEqual([]);
  });

  it("stops at MAX_CHANGES rows", () => {
    const big = Object.fromEntries(Array.from({ length: MAX_CHANGES + 50 }, (_, i) => [`f${i}`, i]));
    expect(changesOf(null, big)).toHaveLength(MAX_CHANGES);
  });

  it("tells the trail's markers apart from objects that only look alike", () => {
    expect(digestOf({ chars: 3, sha256: "ab" })).toEqual({ chars: 3, sha256: "ab", truncated: false });
    expect(digestOf({ truncated: true, chars: 20_000, sha256: "cd" })).toEqual({ chars: 20_000, sha256: "cd", truncated: true });
    expect(digestOf({ chars: 3, sha256: "ab", name: "x" })).toBeNull();
    expect(digestOf({ chars: "3", sha256: "ab" })).toBeNull();
    expect(valueText("text")).toBe("text");
    expect(valueText({ a: 1 })).toBe('{"a":1}');
    expect(valueText(null)).toBe("null");
  });
});

describe("audit filters", () => {
  it("round-trip through the address and become the API's filter", () => {
    const f = { ...NO_FILTERS, actions: ["createJob", "deleteJob"], subject: "65f0", outcome: "FORBIDDEN", from: "2026-11-01T00:00:00.000Z" };
    const search = filtersToSearch(f);
    expect(filtersFromSearch(search)).toEqual(f);
    expect(auditFilter(f)).toEqual({ actions: ["createJob", "deleteJob"], targetId: "65f0", outcome: "FORBIDDEN", from: "2026-11-01T00:00:00.000Z" });
    expect(auditFilter(NO_FILTERS)).toBeNull();
    expect(filtersToSearch(NO_FILTERS)).toBe("");
  });

  it("read leniently from a hand-typed address: names split on commas and spaces, bad dates dropped", () => {
    expect(parseActions(" createJob, deleteJob  createJob,")).toEqual(["createJob", "deleteJob"]);
    const f = filtersFromSearch("?action=updateJob&from=yesterday&outcome=forbidden&user=u1&key=k1");
    expect(f).toEqual({ ...NO_FILTERS, actions: ["updateJob"], outcome: "FORBIDDEN", userId: "u1", apiKeyId: "k1" });
    expect(auditFilter(f)).toEqual({ actions: ["updateJob"], outcome: "FORBIDDEN", actorUserId: "u1", actorApiKeyId: "k1" });
  });

  it("a long action= list is never cut inside a name, and past the limit the page says so", () => {
    // 30 names of 9-10 characters: over 200 characters, where the text was cut (mid-name), and over the 20 names kept silently.
    const names = Array.from({ length: 30 }, (_, i) => `mutation${i}`);
    expect(filtersFromSearch(`?action=${names.join(",")}`).actions).toEqual(names);
    expect(ignoredFilters(`?action=${names.join(",")}`)).toEqual([]);
    const many = Array.from({ length: MAX_ACTIONS + 5 }, (_, i) => `m${i}`);
    expect(filtersFromSearch(`?action=${many.join(",")}`).actions).toEqual(many.slice(0, MAX_ACTIONS));
    expect(ignoredFilters(`?action=${many.join(",")}`)).toEqual([`action= in the address names ${MAX_ACTIONS + 5} mutations; the trail filters by at most ${MAX_ACTIONS}: showing entries of the first ${MAX_ACTIONS} (up to m${MAX_ACTIONS - 1}).`]);
  });
});

/** store/pages.ts: cursors and pages over newest-first orders; store/runs/user-reads.ts: the reported-status filter. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/domain/errors.js";
import { afterDesc, decodeCursor, encodeCursor, toPage } from "../../src/store/pages.js";
import { statusFilter } from "../../src/store/runs/user-reads.js";

describe("pages", () => {
  it("round-trips a cursor and refuses one it did not make", () => {
    const c = encodeCursor(new Date(1_000), "abc");
    expect(decodeCursor(c)).toEqual({ sortKey: new Date(1_000), id: "abc" });
    expect(() => decodeCursor("nonsense")).toThrow(ValidationError);
  });

  it("filters after a cursor in (key desc, _id desc) order", () => {
    expect(afterDesc("createdAt", null)).toEqual({});
    const c = encodeCursor(5, "m");
    expect(afterDesc("createdAt", c)).toEqual({ $or: [{ createdAt: { $lt: new Date(5) } }, { createdAt: new Date(5), _id: { $lt: "m" } }] });
  });

  it("makes a page of `size` from size + 1 documents, the extra one saying there is more", () => {
    const docs = [3, 2, 1].map((n) => ({ _id: `d${n}`, at: new Date(n) }));
    const page = toPage(docs, 2, (d) => d.at);
    expect(page.edges.map((e) => e.node._id)).toEqual(["d3", "d2"]);
    expect(page.pageInfo).toEqual({ hasNextPage: true, endCursor: encodeCursor(2, "d2") });
    expect(toPage(docs, 3, (d) => d.at).pageInfo.hasNextPage).toBe(false);
    expect(toPage([], 3, (d: { _id: string; at: Date }) => d.at).pageInfo).toEqual({ hasNextPage: false, endCursor: null });
  });

  it("reads CANCELLING as a RUNNING run asked to cancel, and RUNNING as one that was not", () => {
    const now = new Date(1_000);
    expect(statusFilter("CANCELLING", now)).toEqual({ status: "RUNNING", cancelRequested: true });
    expect(statusFilter("RUNNING", now)).toEqual({ status: "RUNNING", cancelRequested: { $ne: true } });
    expect(statusFilter("DEAD", now)).toEqual({ status: "DEAD" });
  });

  it("reads SCHEDULED as a QUEUED run whose notBefore is still to come, WITHDRAWN as a CANCELLED one marked withdrawn, and neither as QUEUED or CANCELLED", () => {
    const now = new Date(1_000);
    expect(statusFilter("SCHEDULED", now)).toEqual({ status: "QUEUED", notBefore: { $gt: now } });
    expect(statusFilter("QUEUED", now)).toEqual({ status: "QUEUED", notBefore: { $not: { $gt: now } } });
    expect(statusFilter("WITHDRAWN", now)).toEqual({ status: "CANCELLED", withdrawn: true });
    expect(statusFilter("CANCELLED", now)).toEqual({ status: "CANCELLED", withdrawn: { $ne: true } });
  });
});

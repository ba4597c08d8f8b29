/**
 * `kairos dag trigger --follow` as a stranger saw it: "load SUCCEEDED" printed, then "load
 * RUNNING" (a kairos dev on a private port, a two-task DAG, about one trigger in two). The tasks'
 * state is read once when the stream starts, and an event sent before that read arrived after it.
 * followDagRun here runs against a scripted API that delivers exactly that order.
 */
import { describe, expect, it } from "vitest";
import { followDagRun } from "../../src/cli/follow.js";
import type { Ctx } from "../../src/cli/context.js";

type Sink = { next(v: unknown): void; complete(): void; error(e: unknown): void };

function scriptedCtx(events: Array<{ status: string; task: { key: string; status: string; attempt: number } | null }>, tasksNow: Array<{ key: string; status: string }>, endStatus: string) {
  const out: string[] = [];
  let reads = 0;
  const dagRun = (status: string) => ({
    dagRun: {
      id: "d1",
      dagId: "dag",
      dagName: "etl",
      status,
      finishedAt: null,
      tasks: { edges: tasksNow.map((t) => ({ node: { key: t.key, mapIndex: null, status: t.status, attempt: 1, note: null, run: { id: `run-${t.key}`, status: t.status, exitCode: 0 } } })), pageInfo: { hasNextPage: false, endCursor: null } },
    },
  });
  const api = {
    // The first read is the snapshot taken at the first event; the last, the end status.
    request: async () => (reads++ === 0 ? dagRun("RUNNING") : dagRun(endStatus)),
    subscribe: (_doc: unknown, _vars: unknown, sink: Sink) => {
      void (async () => {
        for (const e of events) {
          sink.next({ dagRunUpdated: { at: "2026-11-28T12:39:57.000Z", dagId: "dag", dagRunId: "d1", status: e.status, task: e.task && { ...e.task, mapIndex: null, runId: `run-${e.task.key}`, runStatus: e.task.status } } });
          await new Promise((r) => setTimeout(r, 5));
        }
        sink.complete();
      })();
      return () => undefined;
    },
  };
  const ctx = {
    io: { out: (t: string) => out.push(t), err: () => undefined, color: false, interactive: false, env: {}, stdin: async () => "", now: () => Date.now() },
    cleanups: [],
    api: async () => api,
  } as unknown as Ctx;
  return { ctx, out };
}

describe("kairos dag trigger --follow", () => {
  it("never prints a task going back (RUNNING after SUCCEEDED) when an event older than the first read arrives after it", async () => {
    const { ctx, out } = scriptedCtx(
      [
        { status: "RUNNING", task: null },
        // Sent before the snapshot was read, delivered after it.
        { status: "RUNNING", task: { key: "load", status: "RUNNING", attempt: 1 } },
        { status: "SUCCEEDED", task: { key: "load", status: "SUCCEEDED", attempt: 1 } },
        { status: "SUCCEEDED", task: null },
      ],
      [
        { key: "extract", status: "SUCCEEDED" },
        { key: "load", status: "SUCCEEDED" },
      ],
      "SUCCEEDED",
    );
    expect(await followDagRun(ctx, "d1")).toBe(0);
    const lines = out.join("").trim().split("\n").map((l) => l.slice(10).replace(/\s+/g, " ").replace(/ run \S+$/, ""));
    expect(lines).toEqual(["extract SUCCEEDED", "load SUCCEEDED", "(dag run) RUNNING", "(dag run) SUCCEEDED"]);
  });

  it("still prints every step of a task that is followed from the start, and a second attempt", async () => {
    const { ctx, out } = scriptedCtx(
      [
        { status: "RUNNING", task: { key: "a", status: "QUEUED", attempt: 1 } },
        { status: "RUNNING", task: { key: "a", status: "RUNNING", attempt: 1 } },
        { status: "RUNNING", task: { key: "a", status: "FAILED", attempt: 1 } },
        { status: "RUNNING", task: { key: "a", status: "QUEUED", attempt: 2 } },
        { status: "RUNNING", task: { key: "a", status: "RUNNING", attempt: 2 } },
        { status: "FAILED", task: { key: "a", status: "FAILED", attempt: 2 } },
      ],
      [{ key: "a", status: "PENDING" }],
      "FAILED",
    );
    expect(await followDagRun(ctx, "d1")).toBe(1);
    const lines = out.join("").trim().split("\n").map((l) => l.slice(10).replace(/\s+/g, " ").replace(/ run \S+$/, ""));
    expect(lines).toEqual(["a QUEUED", "a RUNNING", "a FAILED", "a QUEUED (attempt 2)", "a RUNNING (attempt 2)", "a FAILED (attempt 2)"]);
  });
});

/** The chaos analysis on hand-made inputs: each figure of the chaos line counts what it claims. */
import { describe, expect, it } from "vitest";
import { analyze, chaosLine, executorEnds, type RunLike } from "./analyze.js";
import type { ChaosSchedule } from "./expected.js";
import { expectedSlots } from "./expected.js";
import type { LedgerLine } from "./ledger.js";
import { parseLedger } from "./ledger.js";

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const job = (id: string): { id: string; schedule: ChaosSchedule } => ({ id, schedule: { kind: "INTERVAL", everyMs: 1_000, startAt: T0, endAt: T0 + 2_000 } });
const run = (id: string, jobId: string, at: number, status: string, token: number, startedAt = at + 10): RunLike => ({
  _id: id,
  jobId,
  scheduledFor: new Date(at),
  status,
  fencingToken: token,
  attempt: token,
  startedAt: new Date(startedAt),
  history: status === "SUCCEEDED" ? [{ status: "SUCCEEDED", at: new Date(at + 500) }] : [],
});
const line = (runId: string, token: number, jobId: string, at: number, kind: "start" | "end", when: number, pid = 100): LedgerLine => ({
  runId,
  attempt: token,
  token,
  jobId,
  scheduledFor: at,
  kind,
  at: when,
  pid,
});

describe("expectedSlots", () => {
  it("includes both bounds for INTERVAL and evaluates CRON with cron-parser", () => {
    expect(expectedSlots({ kind: "INTERVAL", everyMs: 1_000, startAt: T0, endAt: T0 + 2_000 })).toEqual([T0, T0 + 1_000, T0 + 2_000]);
    expect(expectedSlots({ kind: "CRON", cron: "*/3 * * * * *", timezone: "UTC", startAt: T0, endAt: T0 + 7_000 })).toEqual([T0, T0 + 3_000, T0 + 6_000]);
  });
});

describe("analyze", () => {
  it("counts committed, lost, duplicates, re-executions and overlaps", () => {
    const jobs = [job("j")];
    const [a, b, c] = [T0, T0 + 1_000, T0 + 2_000];
    const runs = [run("r1", "j", a, "SUCCEEDED", 2), run("r2", "j", b, "SUCCEEDED", 1), run("r3", "j", c, "FAILED", 1)];
    const ledger = [
      // slot a: attempt 1 killed with its executor (pid 7) at a+300, attempt 2 starts later and ends.
      line("r1", 1, "j", a, "start", a + 100, 7),
      line("r1", 2, "j", a, "start", a + 4_000),
      line("r1", 2, "j", a, "end", a + 4_500),
      // slot b: two attempts that overlap in time; the committed one ended.
      line("r2", 1, "j", b, "start", b + 100),
      line("r2", 1, "j", b, "end", b + 900),
      line("r2", 0, "j", b, "start", b + 500, 9),
    ];
    const events = [{ name: "executor-1", kind: "kill9" as const, at: a + 300, pid: 7 }];
    const r = analyze({ jobs, runs, ledger, events });
    expect(r.expected).toBe(3);
    expect(r.created).toBe(3);
    expect(r.committed).toBe(2);
    expect(r.lost).toBe(1);
    expect(r.details.lostSlots).toEqual([`j@${c}`]);
    expect(r.reexecutions).toBe(2);
    // slot a: [a+100, a+800] vs [a+4000, a+4500]: apart. slot b: the open attempt overlaps.
    expect(r.leaseOverlaps).toBe(1);
    expect(r.details.overlaps[0]!.slot).toBe(`j@${b}`);
    expect(r.openAttempts).toBe(1);
    expect(r.lateness.max).toBe(10);
    expect(chaosLine(r)).toMatch(/^expected=3 created=3 committed=2 lost=1 dup_committed=0 reexecutions=2 lease_overlaps=1 lateness p50\/p99\/max=10\/10\/10 ms$/);
  });

  it("bounds an attempt by its executor's log when it was killed for a lost lease", () => {
    const jobs = [job("j")];
    const runs = [run("r1", "j", T0, "SUCCEEDED", 2)];
    const ledger = [line("r1", 1, "j", T0, "start", T0 + 100), line("r1", 2, "j", T0, "start", T0 + 3_000), line("r1", 2, "j", T0, "end", T0 + 3_500)];
    const log = JSON.stringify({ level: "warn", time: new Date(T0 + 2_000).toISOString(), runId: "r1", token: 1, msg: "attempt killed: lease lost; result not reported" });
    const open = analyze({ jobs, runs, ledger, events: [] });
    expect(open.leaseOverlaps).toBe(1);
    const bounded = analyze({ jobs, runs, ledger, events: [], executorEnds: executorEnds(`${log}\n`) });
    expect(bounded.leaseOverlaps).toBe(0);
    expect(bounded.openAttempts).toBe(0);
  });

  it("reports a slot committed twice and a SUCCEEDED run without its end line", () => {
    const jobs = [job("j")];
    const twice = run("r1", "j", T0, "SUCCEEDED", 1);
    twice.history = [
      { status: "SUCCEEDED", at: new Date(T0 + 1) },
      { status: "SUCCEEDED", at: new Date(T0 + 2) },
    ];
    const r = analyze({ jobs, runs: [twice, run("r2", "j", T0 + 1_000, "SUCCEEDED", 1)], ledger: [line("r1", 1, "j", T0, "end", T0 + 5)], events: [] });
    expect(r.dupCommitted).toBe(1);
    expect(r.succeededWithoutEnd).toBe(1);
    expect(r.committed).toBe(1);
  });
});

describe("parseLedger", () => {
  it("reads the lines the job command writes and counts malformed ones", () => {
    const text = `r1 1 1 j 2026-01-01T00:00:00.000Z start 1767225600100 42\nr1 1 1 j 2026-01-01T00:00:00.000Z end 1767225600900 42\ngarbage\n`;
    const { lines, malformed } = parseLedger(text);
    expect(malformed).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ runId: "r1", token: 1, jobId: "j", scheduledFor: T0, kind: "start", at: 1767225600100, pid: 42 });
  });
});

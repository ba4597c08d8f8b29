/** The chaos analysis on hand-made inputs: each figure of the chaos line counts what it claims. */
import { describe, expect, it } from "vitest";
import {
  analyze,
  analyzeDags,
  chaosLine,
  dagFigures,
  dagInstanceInput,
  dagViolations,
  executorEnds,
  faultLines,
  faultsFromEvents,
  recovery,
  recoveryLines,
  requeueOf,
  schedulerUpFrom,
  supervisorKills,
  type ChaosDag,
  type RunLike,
  type TaskRunLike,
} from "./analyze.js";
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

  it("bounds an attempt by its executor's log when its claim was not confirmed", () => {
    const jobs = [job("j")];
    const runs = [run("r1", "j", T0, "SUCCEEDED", 2)];
    const ledger = [line("r1", 1, "j", T0, "start", T0 + 100), line("r1", 2, "j", T0, "start", T0 + 3_000), line("r1", 2, "j", T0, "end", T0 + 3_500)];
    const log = JSON.stringify({ level: "warn", time: new Date(T0 + 2_000).toISOString(), runId: "r1", token: 1, reason: "claim refused", msg: "attempt killed: its claim was not confirmed; result not reported" });
    expect(analyze({ jobs, runs, ledger, events: [], executorEnds: executorEnds(`${log}\n`) }).leaseOverlaps).toBe(0);
  });

  it("bounds an attempt by a supervisor kill of its run on its executor, before the run's next start there", () => {
    const jobs = [job("j")];
    const runs = [run("r1", "j", T0, "SUCCEEDED", 3)];
    // Token 1 on pid 100 (no end), token 2 on pid 200 at +3000, token 3 again on pid 100 at +5000.
    const ledger = [
      line("r1", 1, "j", T0, "start", T0 + 100, 100),
      line("r1", 2, "j", T0, "start", T0 + 3_000, 200),
      line("r1", 2, "j", T0, "end", T0 + 3_500, 200),
      line("r1", 3, "j", T0, "start", T0 + 5_000, 100),
      line("r1", 3, "j", T0, "end", T0 + 5_500, 100),
    ];
    const kill = (at: number, pid: number) => JSON.stringify({ level: "error", time: new Date(at).toISOString(), pid, runId: "r1", msg: "the supervisor killed an attempt at its lease deadline (the executor did not renew or kill it in time)" });
    expect(supervisorKills(`${kill(T0 + 2_000, 100)}\nnoise\n`)).toEqual([{ runId: "r1", pid: 100, at: T0 + 2_000 }]);
    // Killed at +2000 on its own executor: ends before token 2 starts.
    expect(analyze({ jobs, runs, ledger, events: [], supervisorKills: supervisorKills(kill(T0 + 2_000, 100)) }).leaseOverlaps).toBe(0);
    // A kill on another executor, or one after the run's next start on this executor, says nothing about token 1.
    for (const k of [kill(T0 + 2_000, 200), kill(T0 + 5_200, 100)]) {
      const r = analyze({ jobs, runs, ledger, events: [], supervisorKills: supervisorKills(k) });
      expect(r.openAttempts).toBe(1);
      expect(r.leaseOverlaps).toBe(2);
    }
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

describe("recovery", () => {
  // One job due every second over 40 s; three slots are slow: one the dead executor took with it,
  // one after the flush, one after the scheduler's kill.
  const every = { kind: "INTERVAL" as const, everyMs: 1_000, startAt: T0, endAt: T0 + 40_000 };
  const KILL_EXEC = T0 + 10_000;
  const FLUSH = T0 + 20_000;
  const KILL_SCHED = T0 + 30_500;
  const lateness = (at: number) => (at === T0 + 9_000 ? 6_000 : at === T0 + 21_000 ? 4_000 : at === T0 + 31_000 ? 9_000 : 100);

  function input() {
    const runs: RunLike[] = [];
    const ledger: LedgerLine[] = [];
    for (const at of expectedSlots(every)) {
      const token = at === T0 + 9_000 ? 2 : 1;
      runs.push(run(`r${at}`, "j", at, "SUCCEEDED", token, at + lateness(at)));
      if (token === 2) {
        // Attempt 1 ran on executor pid 7, killed at KILL_EXEC; attempt 2 started 5.5 s after the kill.
        // Its lease ended 2 s after the kill; it was queued again 40 ms later.
        runs.at(-1)!.history!.unshift({ status: "QUEUED", at: new Date(KILL_EXEC + 2_040), reason: `executor lost: node lease (epoch 1) expired at ${new Date(KILL_EXEC + 2_000).toISOString()} on node n7; queued again as attempt 2` });
        ledger.push(line(`r${at}`, 1, "j", at, "start", at + 100, 7));
        ledger.push(line(`r${at}`, 2, "j", at, "start", KILL_EXEC + 5_500, 8));
        ledger.push(line(`r${at}`, 2, "j", at, "end", KILL_EXEC + 6_000, 8));
      } else {
        ledger.push(line(`r${at}`, 1, "j", at, "start", at + lateness(at), 8), line(`r${at}`, 1, "j", at, "end", at + lateness(at) + 300, 8));
      }
    }
    const events = [
      { name: "executor-1", kind: "kill9" as const, at: KILL_EXEC, pid: 7 },
      { name: "executor-1", kind: "start" as const, at: KILL_EXEC + 3_000, pid: 70 },
      { name: "redis", kind: "flushall" as const, at: FLUSH, pid: 5 },
      { name: "scheduler-2", kind: "kill9" as const, at: KILL_SCHED, pid: 9 },
      { name: "redis", kind: "kill9" as const, at: T0 + 38_000, pid: 5 },
    ];
    return { jobs: [{ id: "j", schedule: every }], runs, ledger, events };
  }

  it("reads the fault log from the harness's events", () => {
    const faults = faultsFromEvents(input().events);
    expect(faults.map((f) => [f.kind, f.at - T0, f.target])).toEqual([
      ["executor_lost", 10_000, "executor-1"],
      ["store_flushed", 20_000, "redis"],
      ["scheduler_lost", 30_500, "scheduler-2"],
      ["store_restarted", 38_000, "redis"],
    ]);
  });

  it("takes, per fault, the max lateness of the slots due in [fault − 2 s, fault + lease], grouped by cause", () => {
    const i = input();
    const report = analyze(i);
    expect(report.lost).toBe(0);
    expect(report.killedAttempts).toEqual([
      { slot: `j@${T0 + 9_000}`, pid: 7, killedAt: KILL_EXEC, nextStart: KILL_EXEC + 5_500, requeue: { how: "lease", endAt: KILL_EXEC + 2_000, at: KILL_EXEC + 2_040 } },
    ]);
    const rec = recovery(report, faultsFromEvents(i.events), { leaseMs: 3_000 });
    const [exec, flush, sched, restart] = rec.perFault;
    // Executor killed at 10 s: slots 8..13 s; the one due at 9 s restarted 6 s late.
    expect(exec).toMatchObject({ due: 6, maxLateness: 6_000, slow: 1, killedAttempts: 1, restartAfterKillMax: 5_500, neverRestarted: 0, requeueAfterEndMax: 40, startAfterRequeueMax: 3_460 });
    expect(exec!.requeuedBy).toEqual({ lease: 1, claim: 0, other: 0, none: 0 });
    // Flush at 20 s: slots 18..23 s; 4 s is late but not slow (> 5 s).
    expect(flush).toMatchObject({ due: 6, maxLateness: 4_000, slow: 0 });
    // Scheduler killed at 30.5 s: slots 29..33 s (28 is outside [28.5, 33.5]).
    expect(sched).toMatchObject({ due: 5, maxLateness: 9_000, slow: 1 });
    // Redis restarted at 38 s: slots 36..40 s (the window is cut by the schedule's end).
    expect(restart).toMatchObject({ due: 5, maxLateness: 100, slow: 0 });
    expect(rec.byCause.executor_lost).toMatchObject({ faults: 1, maxLateness: 6_000, worstAt: KILL_EXEC, restartAfterKillMax: 5_500 });
    expect(rec.byCause.scheduler_lost).toMatchObject({ faults: 1, maxLateness: 9_000, worstAt: KILL_SCHED, slow: 1 });
    // Slots due before the first fault's window (8 s): 0..7, all 100 ms late.
    expect(rec.baseline).toEqual({ n: 8, p99: 100, max: 100 });
    // A longer lease widens the windows: the executor's window now reaches the flush's slow slot.
    const wide = recovery(report, faultsFromEvents(i.events), { leaseMs: 30_000 });
    expect(wide.perFault[0]).toMatchObject({ due: 33, maxLateness: 9_000, slow: 2 });
    // Two executor kills 2 s apart: their windows share slots, counted once for the cause.
    const twice = [...faultsFromEvents(i.events), { kind: "executor_lost" as const, at: KILL_EXEC + 2_000, target: "executor-2", pid: 70 }];
    const both = recovery(report, twice, { leaseMs: 3_000 });
    expect(both.byCause.executor_lost).toMatchObject({ faults: 2, due: 8, slow: 1, maxLateness: 6_000, killedAttempts: 1 });
    const lines = recoveryLines(rec, T0);
    expect(lines[0]).toBe("recovery executor_lost faults=1 due=6 max_lateness=6000 ms (fault at T+10.0s) slow>5s=1 killed_attempts=1 restart_after_kill_max=5500 ms requeue_after_lease_end_max=40 ms start_after_requeue_max=3460 ms");
    expect(lines.at(-1)).toBe("recovery baseline due=8 p99/max=100/100 ms (slots due before the first fault)");
    expect(faultLines(rec, T0)[1]).toBe("fault T+20.0s store_flushed redis due=6 max_lateness=4000 ms slow>5s=0");
  });

  it("tells how a killed attempt's run was queued again, from its history", () => {
    const r = run("r", "j", T0, "SUCCEEDED", 2);
    r.history = [
      { status: "RUNNING", at: new Date(T0 + 10), reason: "claimed" },
      { status: "QUEUED", at: new Date(T0 + 30_020), reason: `executor lost: taken from the queue and never confirmed, claim expired at ${new Date(T0 + 30_000).toISOString()}; queued again` },
      { status: "QUEUED", at: new Date(T0 + 60_000), reason: "store rebuilt: Redis lost its data; queued again" },
    ];
    expect(requeueOf(r, T0)).toEqual({ how: "claim", endAt: T0 + 30_000, at: T0 + 30_020 });
    expect(requeueOf(r, T0 + 40_000)).toEqual({ how: "other", endAt: null, at: T0 + 60_000 });
    expect(requeueOf(r, T0 + 70_000)).toBeNull();
    expect(requeueOf(undefined, T0)).toBeNull();
  });

  it("knows when a scheduler was serving, to count a reclaim from then when none was", () => {
    const ev = (name: string, kind: "start" | "ready" | "kill9" | "exit", at: number, pid: number) => ({ name, kind, at, pid });
    const events = [
      ev("scheduler-1", "start", 0, 1),
      ev("scheduler-1", "ready", 1_000, 1),
      ev("scheduler-2", "ready", 1_500, 2),
      ev("executor-1", "ready", 1_600, 3),
      ev("scheduler-1", "kill9", 10_000, 1),
      ev("scheduler-2", "kill9", 12_000, 2),
      ev("executor-1", "kill9", 12_500, 3),
      ev("scheduler-1", "start", 13_000, 4),
      ev("scheduler-1", "ready", 20_000, 4),
    ];
    expect(schedulerUpFrom(events, 500)).toBe(1_000);
    expect(schedulerUpFrom(events, 11_000)).toBe(11_000); // scheduler-2 still up
    expect(schedulerUpFrom(events, 12_000)).toBe(20_000); // both down until the restart is ready
    expect(schedulerUpFrom(events, 25_000)).toBe(25_000);
    expect(schedulerUpFrom(events.slice(0, 7), 12_000)).toBe(Infinity);
  });

  it("counts an attempt killed with its executor that never started again", () => {
    const jobs = [job("j")];
    const runs = [run("r1", "j", T0, "SUCCEEDED", 1)];
    const ledger = [line("r1", 1, "j", T0, "start", T0 + 100, 7), line("r1", 1, "j", T0, "end", T0 + 400, 7), line("r2", 1, "j", T0 + 1_000, "start", T0 + 1_100, 7)];
    const events = [{ name: "executor-2", kind: "kill9" as const, at: T0 + 1_500, pid: 7 }];
    const report = analyze({ jobs, runs, ledger, events });
    const rec = recovery(report, faultsFromEvents(events), { leaseMs: 3_000 });
    expect(rec.perFault[0]).toMatchObject({ killedAttempts: 1, neverRestarted: 1 });
    expect(rec.perFault[0]!.restartAfterKillMax).toBeNaN();
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

describe("DAG runs under chaos", () => {
  // A diamond a → b, c → d firing at T0 and T0 + 1 s.
  const dag: ChaosDag = {
    id: "dag1",
    schedule: { kind: "INTERVAL", everyMs: 1_000, startAt: T0, endAt: T0 + 1_000 },
    tasks: [
      { key: "a", dependsOn: [] },
      { key: "b", dependsOn: ["a"] },
      { key: "c", dependsOn: ["a"] },
      { key: "d", dependsOn: ["b", "c"] },
    ],
  };
  const taskRun = (id: string, key: string, at: number, status: string, token: number): TaskRunLike => ({ ...run(id, "dag1", at, status, token), dagRunId: `dr@${at}`, taskKey: key, mapIndex: null });
  const dagRun = (at: number, status = "SUCCEEDED") => ({ _id: `dr@${at}`, dagId: "dag1", scheduledFor: new Date(at), status });
  /** One fire run in dependency order: a 0-100, b and c 200-300, d 400-500 (offsets from the slot). */
  const clean = (at: number, p = "") => {
    const runs = ["a", "b", "c", "d"].map((k) => taskRun(`${p}${k}${at}`, k, at, "SUCCEEDED", 1));
    const times: Record<string, [number, number]> = { a: [0, 100], b: [200, 300], c: [200, 300], d: [400, 500] };
    const lines = ["a", "b", "c", "d"].flatMap((k) => [
      line(`${p}${k}${at}`, 1, "dag1", at, "start", at + times[k]![0]),
      line(`${p}${k}${at}`, 1, "dag1", at, "end", at + times[k]![1]),
    ]);
    return { runs, lines };
  };
  const both = (f: (at: number) => { runs: TaskRunLike[]; lines: LedgerLine[] }) => {
    const x = f(T0);
    const y = f(T0 + 1_000);
    return { runs: [...x.runs, ...y.runs], lines: [...x.lines, ...y.lines] };
  };
  const full = (runs: TaskRunLike[], lines: LedgerLine[], dagRuns = [dagRun(T0), dagRun(T0 + 1_000)]) => {
    const inst = dagInstanceInput([dag], runs, lines);
    return { r: analyze({ jobs: inst.jobs, runs: inst.runs, ledger: inst.ledger, events: [] }), d: analyzeDags({ dags: [dag], dagRuns, runs, ledger: lines }) };
  };

  it("counts each task instance as a slot: all committed, in order, nothing to report", () => {
    const { runs, lines } = both((at) => clean(at));
    const { r, d } = full(runs, lines);
    expect([r.expected, r.committed, r.lost, r.dupCommitted, r.leaseOverlaps, r.unexpected]).toEqual([8, 8, 0, 0, 0, 0]);
    expect([d.expectedDagRuns, d.dagRuns, d.dagRunsSucceeded, d.taskInstances, d.orderViolations, d.missingDagRuns, d.dupDagRuns, d.notSucceeded]).toEqual([2, 2, 2, 8, 0, 0, 0, 0]);
    expect(dagViolations(d)).toEqual([]);
    expect(dagFigures(d)).toBe("dags=1 dag_runs=2/2 dag_runs_succeeded=2 dag_tasks=8 dag_runs_missing=0 dag_runs_dup=0 dag_runs_not_succeeded=0 dag_order_violations=0");
  });

  it("reports a task instance never committed as lost and one committed twice as dup_committed", () => {
    const { runs, lines } = both((at) => clean(at));
    // Fire 2's d never succeeded; fire 1's c has a second SUCCEEDED run.
    const d2 = runs.find((x) => x._id === `d${T0 + 1_000}`)!;
    d2.status = "FAILED";
    d2.history = [];
    runs.push(taskRun("c-dup", "c", T0, "SUCCEEDED", 1));
    lines.push(line("c-dup", 1, "dag1", T0, "start", T0 + 310), line("c-dup", 1, "dag1", T0, "end", T0 + 350));
    const { r, d } = full(runs, lines, [dagRun(T0), dagRun(T0 + 1_000, "FAILED")]);
    expect(r.lost).toBe(1);
    expect(r.details.lostSlots).toEqual([`dag1/d@${T0 + 1_000}`]);
    expect(r.dupCommitted).toBe(1);
    expect(r.details.dupSlots).toEqual([`dag1/c@${T0}`]);
    expect(d.notSucceeded).toBe(1);
    expect(dagViolations(d)).toHaveLength(1);
  });

  it("counts overlapping attempts of one task instance, not attempts of sibling tasks running side by side", () => {
    const { runs, lines } = both((at) => clean(at));
    // b and c of a fire run at the same time (siblings): no overlap. A second attempt of b's run
    // (token 2) starting while token 1 still ran: one overlap.
    lines.push(line(`b${T0}`, 2, "dag1", T0, "start", T0 + 250));
    const { r } = full(runs, lines);
    expect(r.leaseOverlaps).toBe(1);
    expect(r.details.overlaps[0]!.slot).toBe(`dag1/b@${T0}`);
  });

  it("flags a child attempt that started before a parent's committed end, or whose parent never committed", () => {
    const { runs, lines } = both((at) => clean(at));
    // Fire 1: d's start moved before b's and c's ends (both at +300): one violation per parent.
    lines.find((l) => l.runId === `d${T0}` && l.kind === "start")!.at = T0 + 250;
    // Fire 2: b's run failed (no commit) but d ran anyway.
    const b2 = runs.find((x) => x._id === `b${T0 + 1_000}`)!;
    b2.status = "FAILED";
    const { d } = full(runs, lines);
    expect(d.orderViolations).toBe(3);
    expect(d.details.order[0]).toContain(`d run d${T0} started at ${T0 + 250}, parent b ended at ${T0 + 300}`);
    expect(d.details.order[1]).toContain("parent c ended at");
    expect(d.details.order[2]).toContain("parent b never committed");
    expect(dagViolations(d)[0]).toMatch(/^dag_order_violations=3/);
  });

  it("an earlier attempt of a parent that ended is not the committed end: the child must follow the committed attempt", () => {
    const { runs, lines } = both((at) => clean(at));
    // a's run committed under token 2 (ending at +150); token 1 ended at +100 but was not reported.
    const a1 = runs.find((x) => x._id === `a${T0}`)!;
    a1.fencingToken = 2;
    lines.push(line(`a${T0}`, 2, "dag1", T0, "start", T0 + 120), line(`a${T0}`, 2, "dag1", T0, "end", T0 + 250));
    const { d } = full(runs, lines);
    // b and c started at +200, before the committed a's end at +250.
    expect(d.orderViolations).toBe(2);
  });

  it("a task with parents is late from its parents' committed ends, not from the DAG run's slot", () => {
    const { runs, lines } = both((at) => clean(at));
    // startedAt as the executor recorded it: a at +10, b and c at +210, d at +420 (the ledger's starts are the program's).
    const startOffset: Record<string, number> = { a: 10, b: 210, c: 210, d: 420 };
    for (const r of runs) r.startedAt = new Date(r.scheduledFor.getTime() + startOffset[r.taskKey!]!);
    const { r } = full(runs, lines);
    // a from its slot (10 ms); b and c from a's end at +100 (110 ms); d from b's and c's ends at +300 (120 ms).
    expect(r.lateness).toMatchObject({ max: 120, n: 8 });
    expect(r.slotLateness.filter((x) => x.due === T0 + 300).map((x) => x.lateness)).toEqual([120]);
  });

  it("reports fires without a DAG run and fires with two", () => {
    const { runs, lines } = both((at) => clean(at));
    const { d } = full(runs, lines, [dagRun(T0), { ...dagRun(T0), _id: "other" }]);
    expect([d.missingDagRuns, d.dupDagRuns]).toEqual([1, 1]);
    expect(dagViolations(d)).toHaveLength(2);
  });
});

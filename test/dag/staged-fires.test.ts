/**
 * A scheduled DAG whose overlap policy is ALLOW fires like such a job: each slot's DAG run is made
 * up to the stage-ahead before the slot and its first tasks wait staged until the slot's time, so
 * they start on time, never before. A change of the DAG within that window takes back the staged
 * DAG runs no executor started (src/dag/engine/staged.ts): pauseDag (the slots then count as
 * paused), updateDag of its definition (the slots fire again at the new version), clearSchedule
 * (no more fires). Other overlap policies are judged at the slot's time, so never staged.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";
import { listTasks, tasksInput, tasksPage, type AsRead } from "./helpers.js";

const STAGE_AHEAD_MS = 3_000;
const t = useTestApp({ scheduler: { lateToleranceMs: 500, stageAheadMs: STAGE_AHEAD_MS } });

interface Fire { slotAt: string; outcome: string; runId: string | null }
interface TaskRow { key: string; status: string; run: { status: string; startedAt: string | null; history: Array<{ status: string; reason: string | null }> } | null }
interface DagRunRow { id: string; status: string; dagVersion: number; scheduledFor: string; createdAt: string; tasks: TaskRow[] }

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EVERY_SECOND = { kind: "CRON", cron: "* * * * * *" };

async function createDag(input: Record<string, unknown>): Promise<string> {
  return (await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input }, t.admin)).createDag.id;
}

async function fires(id: string): Promise<Fire[]> {
  const d = await gqlOk<{ dag: { fires: { edges: Array<{ node: Fire }> } } }>(t.app.url, `query($id: ID!) { dag(id: $id) { fires(first: 100) { edges { node { slotAt outcome runId } } } } }`, { id }, t.admin);
  return d.dag.fires.edges.map((e) => e.node);
}

async function dagRuns(id: string): Promise<DagRunRow[]> {
  const d = await gqlOk<{ dagRuns: { edges: Array<{ node: AsRead<DagRunRow> }> } }>(
    t.app.url,
    `query($id: ID!) { dagRuns(dagId: $id, first: 60) { edges { node { id status dagVersion scheduledFor createdAt ${tasksPage(3, "key status run { status startedAt history { status reason } }")} } } } }`,
    { id },
    t.admin,
  );
  return d.dagRuns.edges.map((e) => listTasks<DagRunRow>(e.node));
}

const pauseDag = (id: string) => gqlOk(t.app.url, `mutation($id: ID!) { pauseDag(id: $id) { id } }`, { id }, t.admin);
const resumeDag = (id: string) => gqlOk(t.app.url, `mutation($id: ID!) { resumeDag(id: $id) { id } }`, { id }, t.admin);

/** The ledger holds one outcome per slot. */
function expectOneOutcomePerSlot(f: readonly Fire[]): void {
  const bySlot = new Map<string, number>();
  for (const x of f) bySlot.set(x.slotAt, (bySlot.get(x.slotAt) ?? 0) + 1);
  for (const n of bySlot.values()) expect(n).toBe(1);
}

const settled = (id: string) => waitFor(async () => (await dagRuns(id)).every((r) => r.status !== "RUNNING"), 20_000);
const at = (iso: string) => Date.parse(iso);

/** Pauses the DAG, waits for its DAG runs to settle, and reads them and the ledger (one outcome per slot, checked). */
async function pausedAndRead(id: string): Promise<{ runs: DagRunRow[]; f: Fire[]; byId: Map<string, DagRunRow> }> {
  await pauseDag(id);
  await settled(id);
  const runs = await dagRuns(id);
  const f = await fires(id);
  expectOneOutcomePerSlot(f);
  return { runs, f, byId: new Map(runs.map((r) => [r.id, r])) };
}

const withdrawn = (r: DagRunRow) => r.tasks.some((x) => x.run?.history.some((h) => h.reason?.startsWith("withdrawn before its fire time")));

describe("scheduled DAG runs staged ahead", () => {
  it("makes each slot's DAG run ahead and starts its first tasks at the slot's time, never before; pauseDag takes back the staged ones", async () => {
    const createdAt = Date.now();
    const id = await createDag({
      name: "staged",
      schedule: EVERY_SECOND,
      tasks: tasksInput([{ key: "a", command: "true" }, { key: "b", command: "true" }, { key: "c", command: "true", dependsOn: ["a", "b"] }]),
    });
    await pause(3_500);
    const pausedAt = Date.now();
    await pauseDag(id);
    await settled(id);
    const runs = await dagRuns(id);
    const ran = runs.filter((r) => r.status === "SUCCEEDED");
    expect(ran.length).toBeGreaterThanOrEqual(2);
    // Made ahead of its slot (up to the stage-ahead); the first slot, under a second after the
    // DAG was created, may be reached by the first pass only after its time on a busy machine.
    const ahead = ran.filter((r) => at(r.scheduledFor) >= createdAt + 1_500);
    expect(ahead.length).toBeGreaterThanOrEqual(1);
    for (const r of ahead) expect(at(r.createdAt)).toBeLessThan(at(r.scheduledFor));
    for (const r of ran) {
      // Its first tasks started at the slot or after.
      for (const key of ["a", "b"]) expect(at(r.tasks.find((x) => x.key === key)!.run!.startedAt!)).toBeGreaterThanOrEqual(at(r.scheduledFor));
    }
    // Those staged for slots after the pause were taken back: CANCELLED, nothing of them started.
    const back = runs.filter((r) => r.status !== "SUCCEEDED");
    expect(back.length).toBeGreaterThanOrEqual(1);
    for (const r of back) {
      expect(r.status).toBe("CANCELLED");
      expect(at(r.scheduledFor)).toBeGreaterThan(pausedAt - 1_000);
      expect(withdrawn(r)).toBe(true);
      expect(r.tasks.every((x) => !x.run?.startedAt)).toBe(true);
      // Paused, or (a scheduler's pass that staged it meanwhile) changed while its fire was being prepared.
      expect(r.tasks.find((x) => x.key === "a")!.run!.history.at(-1)!.reason).toMatch(/^withdrawn before its fire time: the DAG (was paused|changed while its fire was being prepared)$/);
    }
    // The ledger: every FIRED slot's DAG run ran; a withdrawn one is no outcome (its slot is judged again on resume).
    const f = await fires(id);
    const fired = f.filter((x) => x.outcome === "FIRED");
    expect(new Set(fired.map((x) => x.runId))).toEqual(new Set(ran.map((r) => r.id)));
    for (const r of back) expect(f.some((x) => x.runId === r.id)).toBe(false);
    // Resumed: a withdrawn slot that passed while paused is SKIPPED_PAUSED; one still to come fires, with a DAG run of its own.
    // Long enough for the first slot taken back (within a second of the pause) to pass while paused.
    await waitFor(async () => Date.now() > pausedAt + 2_000, 5_000);
    const resumedAt = Date.now();
    await resumeDag(id);
    await waitFor(async () => (await dagRuns(id)).filter((r) => r.status === "SUCCEEDED").length > ran.length + 1, 10_000);
    const after = await fires(id);
    let skipped = 0;
    for (const r of back) {
      const slot = after.filter((x) => x.slotAt === r.scheduledFor);
      expect(slot).toHaveLength(1);
      if (at(r.scheduledFor) < resumedAt - 500) {
        expect(slot[0]!.outcome).toBe("SKIPPED_PAUSED");
        skipped++;
      } else if (at(r.scheduledFor) > resumedAt + 500) {
        expect(slot[0]!.outcome).toBe("FIRED");
        expect(slot[0]!.runId).not.toBe(r.id);
      }
    }
    expect(skipped).toBeGreaterThanOrEqual(1);
    await pauseDag(id);
    await settled(id);
  });

  it("updateDag of its tasks takes back the DAG runs staged at the old version, and those slots run the new one", async () => {
    const id = await createDag({ name: "staged-update", schedule: EVERY_SECOND, tasks: tasksInput([{ key: "old", command: "true" }]) });
    await pause(2_000);
    const changedAt = Date.now();
    await gqlOk(t.app.url, `mutation($id: ID!, $p: UpdateDagInput!) { updateDag(id: $id, input: $p) { id version } }`, { id, p: { tasks: tasksInput([{ key: "new", command: "true" }]) } }, t.admin);
    await pause(3_000);
    // Every slot has one outcome; a FIRED slot's DAG run ran, and a slot after the change ran the new version.
    const { runs, f, byId } = await pausedAndRead(id);
    for (const x of f.filter((y) => y.outcome === "FIRED")) {
      const r = byId.get(x.runId!)!;
      expect(r.status).toBe("SUCCEEDED");
      if (at(x.slotAt) > changedAt + 100) expect(r.dagVersion).toBe(2);
    }
    // The version-1 DAG runs staged for slots after the change were taken back, none of their tasks started.
    const back = runs.filter((r) => r.dagVersion === 1 && r.status === "CANCELLED");
    expect(back.length).toBeGreaterThanOrEqual(1);
    for (const r of back) {
      expect(withdrawn(r)).toBe(true);
      expect(at(r.scheduledFor)).toBeGreaterThan(changedAt);
      expect(r.tasks.every((x) => !x.run?.startedAt)).toBe(true);
      // Its slot ran at version 2 instead.
      const slot = f.find((x) => x.slotAt === r.scheduledFor && x.outcome === "FIRED");
      if (slot) expect(byId.get(slot.runId!)!.dagVersion).toBe(2);
    }
    expect(runs.some((r) => r.dagVersion === 2 && r.status === "SUCCEEDED")).toBe(true);
  });

  it("clearSchedule takes back the staged DAG runs: nothing runs for a slot after it", async () => {
    const id = await createDag({ name: "staged-clear", schedule: EVERY_SECOND, tasks: tasksInput([{ key: "a", command: "true" }]) });
    // Until a DAG run is staged for a slot well after now (not a fixed wait: staging lags on a loaded host).
    await waitFor(async () => (await dagRuns(id)).some((r) => at(r.scheduledFor) > Date.now() + 800), 20_000, 100);
    const clearedAt = Date.now();
    await gqlOk(t.app.url, `mutation($id: ID!) { updateDag(id: $id, input: { clearSchedule: true }) { id } }`, { id }, t.admin);
    await settled(id);
    await pause(STAGE_AHEAD_MS);
    const runs = await dagRuns(id);
    const later = runs.filter((r) => at(r.scheduledFor) > clearedAt + 100);
    expect(later.length).toBeGreaterThanOrEqual(1);
    for (const r of later) {
      expect(r.status).toBe("CANCELLED");
      expect(withdrawn(r)).toBe(true);
      expect(r.tasks.every((x) => !x.run?.startedAt)).toBe(true);
    }
  });

  it("pauseDag and resumeDag toggled fast while DAG runs are staged: one outcome per slot, each slot's work at most once and never early", async () => {
    const id = await createDag({ name: "staged-toggle", schedule: EVERY_SECOND, tasks: tasksInput([{ key: "a", command: "true" }, { key: "b", command: "true", dependsOn: ["a"] }]) });
    await pause(1_200);
    for (let i = 0; i < 6; i++) {
      await pauseDag(id);
      await pause(150 + 60 * i);
      await resumeDag(id);
      await pause(250);
    }
    // Until DAG runs of two slots have run (not a fixed 2 s after the last toggle).
    await waitFor(async () => new Set((await dagRuns(id)).filter((r) => r.status === "SUCCEEDED").map((r) => r.scheduledFor)).size >= 2, 15_000);
    const { runs, f, byId } = await pausedAndRead(id);
    for (const x of f.filter((y) => y.outcome === "FIRED")) expect(byId.get(x.runId!)?.status).toBe("SUCCEEDED");
    // Per slot, at most one DAG run did any work; the others were taken back before anything started.
    const worked = new Map<string, number>();
    for (const r of runs) {
      const started = r.tasks.filter((x) => x.run?.startedAt);
      if (started.length === 0) {
        expect(r.status).toBe("CANCELLED");
        continue;
      }
      worked.set(r.scheduledFor, (worked.get(r.scheduledFor) ?? 0) + 1);
      for (const x of started) expect(at(x.run!.startedAt!)).toBeGreaterThanOrEqual(at(r.scheduledFor));
    }
    for (const n of worked.values()) expect(n).toBe(1);
    expect(worked.size).toBeGreaterThanOrEqual(2);
  });

  it("a pauseDag whose process died after pausing the schedule's timer is finished by asking again: nothing staged starts", async () => {
    const id = await createDag({ name: "staged-pause-crash", schedule: EVERY_SECOND, tasks: tasksInput([{ key: "a", command: "true" }]) });
    const stagedRuns = () => dagRuns(id).then((rs) => rs.filter((r) => r.status === "RUNNING" && at(r.scheduledFor) > Date.now() + 300));
    await waitFor(async () => (await stagedRuns()).length >= 2, 5_000);
    // The pause's writes up to the timer job's (the DAG's flag, then the timer job paused), then the
    // process died before taking back what is staged: its DAG runs still staged, their first tasks queued.
    const { updateJobAtVersion } = await import("../../src/store/jobs/edits.js");
    await t.app.services.mongo.c.dags.updateOne({ _id: id }, { $set: { paused: true, pausedAt: new Date() } });
    const timer = (await t.app.services.mongo.c.jobs.findOne({ _id: id }))!;
    expect(await updateJobAtVersion(t.app.services.mongo, timer, { paused: true, pausedAt: new Date(), status: "PAUSED", nextSlotAt: null, nextFireAt: null })).not.toBeNull();
    const left = await stagedRuns();
    expect(left.length).toBeGreaterThanOrEqual(1);
    const askedAt = Date.now();
    await pauseDag(id);
    await settled(id);
    await pause(STAGE_AHEAD_MS);
    const runs = await dagRuns(id);
    for (const r of left) {
      const now = runs.find((x) => x.id === r.id)!;
      expect(now.status).toBe("CANCELLED");
      expect(withdrawn(now)).toBe(true);
      expect(now.tasks.every((x) => !x.run?.startedAt)).toBe(true);
    }
    // Nothing of a slot after the pause ran.
    for (const r of runs) if (at(r.scheduledFor) > askedAt + 100) expect(r.tasks.every((x) => !x.run?.startedAt)).toBe(true);
  });

  it("does not stage a DAG whose overlap policy is not ALLOW: its DAG run is made at the slot's time", async () => {
    const id = await createDag({ name: "not-staged", overlap: "FORBID", schedule: EVERY_SECOND, tasks: tasksInput([{ key: "a", command: "true" }]) });
    // Until two slots have their DAG runs (not a fixed 2.5 s).
    await waitFor(async () => (await dagRuns(id)).length >= 2, 15_000);
    await pauseDag(id);
    await settled(id);
    const runs = await dagRuns(id);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const r of runs) expect(at(r.createdAt)).toBeGreaterThanOrEqual(at(r.scheduledFor));
  });
});

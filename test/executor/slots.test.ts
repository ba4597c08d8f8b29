/**
 * An executor never runs more attempts at once than it has slots, though it keeps more than one
 * take from the ready queue in flight (executor/pull-loop.ts), and it fills every slot when work waits.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { useTestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";

const SLOTS = 3;
const t = useTestApp({ env: { KAIROS_EXECUTOR_SLOTS: String(SLOTS) } });
const caller: Principal = { userId: "000000000000000000000078", username: "slots", role: "ADMIN" };

/** Most runs whose [startedAt, finishedAt) intervals overlap at one instant. */
function mostAtOnce(runs: RunDoc[]): number {
  const edges = runs.flatMap((r) => [
    { at: r.startedAt!.getTime(), d: 1 },
    { at: r.finishedAt!.getTime(), d: -1 },
  ]);
  // An end and a start at the same millisecond: the slot was freed first.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

describe("executor slots", () => {
  it(`runs at most ${SLOTS} attempts at once, and ${SLOTS} while work waits`, async () => {
    const job = await t.app.services.jobs.create(caller, {
      name: "slots",
      schedule: { kind: "ONCE", at: Date.now() + 3_600_000 },
      spec: { kind: "COMMAND", command: "sleep 0.15" },
    });
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push((await t.app.services.jobs.trigger(caller, job._id))._id);
    const runs = await waitFor(async () => {
      const all = await Promise.all(ids.map((id) => t.app.services.runs.get(id)));
      return all.every((r) => r?.status === "SUCCEEDED") ? (all as RunDoc[]) : null;
    }, 20_000, 50);
    expect(mostAtOnce(runs)).toBe(SLOTS);
  });
});

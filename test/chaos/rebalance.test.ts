/**
 * Shard rebalancing (docs/design.md, "Time wheels and firing": a join or a leave moves only ~S/N shards): 64 shards on two
 * schedulers, a third joins while every-second jobs are firing. In process: three `scheduler`
 * roles (Redis adapters, real Redis) against the MongoDB emulator, with production timing knobs
 * (2 s membership heartbeat, 15 s shard lease).
 *
 * Checked: the newcomer takes about a third of the shards, only from the other two (no shard moves
 * between the old members), every shard has exactly one owner afterwards, and every slot of every
 * job across the handover has exactly one run and one FIRED ledger entry (nothing lost, nothing
 * doubled, nothing recorded MISSED).
 */
import { inject } from "vitest";
import { afterAll, describe, expect, it } from "vitest";
import "reflect-metadata";
import { startKairos, type KairosApp } from "../../src/app/start.js";
import { loadConfig } from "../../src/config/index.js";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import { createLogger, silentLogger } from "../../src/support/log.js";
import { expectedSlots } from "./expected.js";
import { sleep, waitUntil } from "./harness.js";

const SHARDS = 64;

describe("shard rebalancing when a third scheduler joins", () => {
  let emulator: RunningEmulator | null = null;
  const apps: KairosApp[] = [];
  afterAll(async () => {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    await emulator?.stop();
  });

  it(
    "moves about a third of the shards and loses or doubles no fire of every-second jobs",
    async () => {
      emulator = await startEmulator({ port: 0 });
      const prefix = `rebalance-${Math.random().toString(36).slice(2)}`;
      const start = async () => {
        const config = loadConfig("scheduler", {
          MONGO_URL: emulator!.uri,
          MONGO_DB: prefix,
          REDIS_URL: inject("redisUrl"),
          KAIROS_REDIS_PREFIX: prefix,
          KAIROS_SHARDS: String(SHARDS),
        });
        const log = process.env.KAIROS_TEST_LOG ? createLogger("info", { scheduler: apps.length }) : silentLogger();
        const app = await startKairos(config, { log });
        apps.push(app);
        return app;
      };
      const owned = () => apps.map((a) => a.scheduler!.ownedShards());
      const stable = async (n: number) =>
        waitUntil(
          `${n} schedulers to split the ${SHARDS} shards`,
          () => {
            const sets = owned();
            const all = sets.flat();
            return sets.length === n && sets.every((s) => s.length > 0) && all.length === SHARDS && new Set(all).size === SHARDS;
          },
          20_000,
          100,
        );

      await start();
      await start();
      await stable(2);

      // 40 every-second jobs over a 16 s window that the join falls in the middle of.
      const jobs = apps[0]!.services.jobs;
      const caller = { userId: "000000000000000000000001", username: "rebalance", role: "ADMIN" as const };
      // Far enough ahead that the 40 jobs exist before their first slot, also on a loaded machine.
      const startAt = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
      const endAt = startAt + 16_000;
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const job = await jobs.create(caller, {
          name: `every-second-${i}`,
          schedule: { kind: "INTERVAL", every: "PT1S", startAt, endAt },
          spec: { kind: "COMMAND", command: "true" },
        });
        ids.push(job._id);
      }
      // Every shard that holds one of these jobs matters for the handover.
      await sleep(Math.max(0, startAt + 5_000 - Date.now()));

      const before = owned();
      await start();
      await stable(3);
      const after = owned();
      const moved = after[2]!.length;
      const fromA = before[0]!.filter((s) => !after[0]!.includes(s));
      const fromB = before[1]!.filter((s) => !after[1]!.includes(s));
      process.stderr.write(
        `[rebalance.test] before ${before[0]!.length}+${before[1]!.length}, after ${after.map((s) => s.length).join("+")}: ` +
          `moved ${moved} (${fromA.length} from A, ${fromB.length} from B)\n`,
      );
      // About S/3: each shard goes to the newcomer with probability 1/3 (member ids are random),
      // so 21.3 ± 3.8; the bounds are 3.5 standard deviations out.
      expect(moved).toBeGreaterThanOrEqual(8);
      expect(moved).toBeLessThanOrEqual(35);
      // Only shards the newcomer won moved: A and B kept the rest, and gained nothing.
      expect([...fromA, ...fromB].sort((a, b) => a - b)).toEqual([...after[2]!].sort((a, b) => a - b));
      expect(after[0]!.every((s) => before[0]!.includes(s))).toBe(true);
      expect(after[1]!.every((s) => before[1]!.includes(s))).toBe(true);

      // Let the window finish and the schedulers handle its last slots.
      await waitUntil(
        "every job to complete",
        async () => (await apps[0]!.services.mongo.c.jobs.countDocuments({ _id: { $in: ids }, status: "ACTIVE" })) === 0,
        Math.max(0, endAt - Date.now()) + 15_000,
        250,
      );
      const { c } = apps[0]!.services.mongo;
      const runs = await c.runs.find({ jobId: { $in: ids } }, { projection: { jobId: 1, scheduledFor: 1 } }).toArray();
      const fires = await c.fires.find({ jobId: { $in: ids } }).toArray();
      const expected = expectedSlots({ kind: "INTERVAL", everyMs: 1_000, startAt, endAt });
      const problems: string[] = [];
      for (const id of ids) {
        const mine = runs.filter((r) => r.jobId === id).map((r) => r.scheduledFor.getTime());
        const counts = new Map<number, number>();
        for (const at of mine) counts.set(at, (counts.get(at) ?? 0) + 1);
        const missing = expected.filter((at) => !counts.has(at));
        const doubled = [...counts].filter(([, n]) => n > 1).map(([at]) => at);
        const extra = [...counts.keys()].filter((at) => !expected.includes(at));
        const notFired = fires.filter((f) => f.jobId === id && f.outcome !== "FIRED");
        if (missing.length || doubled.length || extra.length || notFired.length) {
          problems.push(
            `job ${id}: missing ${missing.map((m) => new Date(m).toISOString())} doubled ${doubled} extra ${extra} ` +
              `not fired ${notFired.map((f) => `${f.slotAt.toISOString()} ${f.outcome} (${f.reason})`).join("; ")}`,
          );
        }
      }
      expect(problems, problems.slice(0, 5).join("\n")).toEqual([]);
      expect(runs.length).toBe(ids.length * expected.length);
    },
    90_000,
  );
});

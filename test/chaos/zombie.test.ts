/**
 * The zombie executor (docs/design.md, "Leases and fencing": "double billing"): an executor is frozen with SIGSTOP while
 * it runs an attempt, past the attempt's lease (PT2S). The reaper reclaims the run
 * (executor lost → QUEUED again at once), the other executor runs attempt 2 to success, and then the
 * zombie is thawed with SIGCONT. Checked:
 * - the zombie's late result is refused: the run keeps attempt 2's result, token and node;
 * - the zombie's program did not keep running next to attempt 2: its last heartbeat line in the
 *   ledger comes before attempt 2 started (a frozen executor cannot kill its runs itself; the
 *   process-group watchdog enforces the lease deadline on its own).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Cluster, sleep, waitUntil } from "./harness.js";

describe("zombie executor (SIGSTOP past its lease, then SIGCONT)", () => {
  let cluster: Cluster | null = null;
  afterAll(async () => {
    await cluster?.stop();
  });

  it(
    "has its late result refused and never runs next to the attempt that replaced it",
    async () => {
      cluster = await Cluster.start({ schedulers: 1, executors: 2, slots: 2, lease: "PT2S", shards: 8 });
      const c = cluster;
      const ticks = join(c.sharedDir, "ticks.txt");
      const marker = join(c.sharedDir, "zombie.first");
      // start line, then (the first attempt only, the zombie's) a tick every 0.25 s for ~6 s, then
      // the end line. The attempt that replaces it ends at once: only its start is compared with the
      // zombie's lines, and the test waited out 6 s more of ticks for nothing.
      const command =
        `umask 0; echo "$KAIROS_RUN_ID $KAIROS_FENCING_TOKEN start $(date +%s%3N) $KAIROS_NODE_ID" >> '${ticks}'; ` +
        `if [ ! -e '${marker}' ]; then touch '${marker}'; ` +
        `i=0; while [ $i -lt 24 ]; do sleep 0.25; echo "$KAIROS_RUN_ID $KAIROS_FENCING_TOKEN tick $(date +%s%3N) $KAIROS_NODE_ID" >> '${ticks}'; i=$((i+1)); done; fi; ` +
        `echo "$KAIROS_RUN_ID $KAIROS_FENCING_TOKEN end $(date +%s%3N) $KAIROS_NODE_ID" >> '${ticks}'`;
      const jobId = await c.createJob({
        name: "zombie",
        schedule: { kind: "ONCE" },
        retry: { maxAttempts: 3, initial: "PT1S", max: "PT1S" },
        spec: { command, timeout: "PT1M" },
      });
      const read = () =>
        (() => {
          try {
            return readFileSync(ticks, "utf8");
          } catch {
            return "";
          }
        })()
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => {
            const [runId, token, kind, at, pid] = l.split(" ");
            return { runId: runId!, token: Number(token), kind: kind!, at: Number(at), pid: c.pidOfNode(pid!) };
          });

      // Attempt 1 starts somewhere and its executor confirms the claim (RUNNING in the store, a
      // confirm goes within 200 ms of the start with a 2 s lease): freeze that executor then.
      const first = await waitUntil("attempt 1 to start", () => read().find((l) => l.kind === "start" && l.token === 1), 60_000, 20);
      const zombie = [...c.procs.values()].find((p) => p.pid === first.pid);
      expect(zombie, `an executor with pid ${first.pid}`).toBeDefined();
      const db0 = await c.db();
      await waitUntil("attempt 1's claim to be confirmed", async () => (await db0.collection("runs").findOne({ jobId, status: "RUNNING", fencingToken: 1 })) ?? null, 10_000, 10);
      const frozenAt = c.freeze(zombie!.name);
      const other = c.names("executor").find((n) => n !== zombie!.name)!;

      // The run is reclaimed and finished by the other executor while the zombie is frozen.
      const db = await c.db();
      const done = await waitUntil(
        "the run to succeed on the other executor",
        async () => {
          const run = await db.collection("runs").findOne({ jobId, status: "SUCCEEDED" });
          return run ?? null;
        },
        90_000,
        200,
      );
      const runId = String(done._id);
      const node = await db.collection("nodes").findOne({ _id: done.nodeId });
      expect(node?.name).toBe(other);
      expect(done.fencingToken).toBeGreaterThanOrEqual(2);
      expect(done.history.some((h: any) => h.status === "QUEUED" && /executor lost: node lease \(epoch \d+\) expired/.test(h.reason ?? ""))).toBe(true);

      // Thaw the zombie and give it time to report.
      const before = JSON.stringify(await db.collection("runs").findOne({ _id: done._id }));
      const zombieLog = zombie!.logSince(0).length;
      c.thaw(zombie!.name);
      const refusal = await waitUntil(
        "the zombie to log that its result was refused or its attempt killed",
        () =>
          /result refused: fencing token is stale|attempt killed: lease lost; result not reported/.exec(zombie!.logSince(zombieLog))?.[0],
        10_000,
        100,
      );
      await sleep(1_000);
      const after = JSON.stringify(await db.collection("runs").findOne({ _id: done._id }));
      expect(after, "the zombie changed the run after it was thawed").toBe(before);
      const final = await db.collection("runs").findOne({ _id: done._id });
      expect(final?.status).toBe("SUCCEEDED");
      expect(final?.fencingToken).toBe(done.fencingToken);
      expect(final?.nodeId).toBe(done.nodeId);

      // No overlap: the zombie's program was dead before attempt 2 started.
      const lines = read().filter((l) => l.runId === runId);
      const zombieLines = lines.filter((l) => l.token === 1);
      const secondStart = lines.find((l) => l.kind === "start" && l.token === done.fencingToken)!;
      const zombieLast = Math.max(...zombieLines.map((l) => l.at));
      const summary =
        `zombie ${zombie!.name} frozen at ${frozenAt}; its attempt 1 started ${first.at}, last line ${zombieLast} ` +
        `(${zombieLines.at(-1)?.kind}), ${zombieLines.length} lines; attempt ${done.fencingToken} on ${other} started ${secondStart.at}; ` +
        `zombie said: "${refusal}"`;
      process.stderr.write(`[zombie.test] ${summary}\n`);
      expect(zombieLines.some((l) => l.kind === "end"), `the zombie's program ran to its end\n${summary}`).toBe(false);
      // A tick every 0.25 s: a program still alive at secondStart would have left a line after it.
      expect(zombieLast + 250, `the zombie's program ran next to attempt 2\n${summary}`).toBeLessThan(secondStart.at);
    },
    240_000,
  );
});

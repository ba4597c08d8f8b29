/**
 * The built `kairos` command line as a subprocess against the product in-process: runs followed
 * and their exit codes, `logs -f` across a dropped connection, another user's job. Logged in
 * (`kairos login`) before the tests; login and apply themselves: kairos.test.ts.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";
import { cuttableProxy, start, until, useCliFixture } from "./fixture.js";

const t = useCliFixture({ login: true });

// Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
describe("kairos command line (built, as a subprocess): runs", { timeout: 300_000 }, () => {
  it("run --follow streams the output and exits 0 for true, 3 for exit 3, 124 for a timeout", async () => {
    const write = (name: string, body: string) => writeFile(join(t.home, name), body).then(() => join(t.home, name));
    // Three jobs of their own, each followed by its own process: side by side.
    const [ok, three, slow] = await Promise.all([
      write("ok.yaml", "name: cli-true\nspec: {command: 'echo fine; true'}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
      write("three.yaml", "name: cli-exit3\nspec: {command: 'echo out; echo err >&2; exit 3'}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
      write("slow.yaml", "name: cli-slow\nspec: {command: 'echo start; sleep 30', timeout: PT1S}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
    ]);
    expect(ok.out).toBe("fine\n");
    expect(ok.code).toBe(0);
    expect(three.out).toBe("out\n");
    expect(three.err).toContain("err\n");
    expect(three.err).toMatch(/FAILED \(exit code 3\)/);
    expect(three.code).toBe(3);
    expect(slow.out).toBe("start\n");
    expect(slow.err).toMatch(/TIMED_OUT/);
    expect(slow.code).toBe(124);
    const again = await t.kairos(["trigger", "cli-exit3", "--follow"]);
    expect(again.code).toBe(3);
    // Everything below only reads, after every run ended: side by side.
    const [failedOut, allOut, tableOut, wentWrongOut, bad] = await Promise.all([
      t.kairos(["get", "runs", "--job", "cli-exit3", "--status", "FAILED", "-o", "json"]),
      t.kairos(["get", "runs", "-o", "json"]),
      t.kairos(["get", "jobs"]),
      t.kairos(["get", "jobs", "--last-run", "failed,TIMED_OUT", "-o", "json"]),
      t.kairos(["get", "jobs", "--last-run", "QUEUED"]),
    ]);
    const failed = JSON.parse(failedOut.out) as Array<{ jobName: string; exitCode: number }>;
    expect(failed.map((r) => [r.jobName, r.exitCode])).toEqual([["cli-exit3", 3], ["cli-exit3", 3]]);
    const all = JSON.parse(allOut.out) as Array<{ jobName: string; status: string }>;
    expect(all).toContainEqual(expect.objectContaining({ jobName: "cli-slow", status: "TIMED_OUT" }));
    // get jobs: each job's last run (how it went, where STATUS says COMPLETED), and filtered by it.
    const table = tableOut.out.split("\n");
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+SCHEDULE\s+NEXT FIRE\s+LAST RUN\s+ID$/);
    expect(table.find((l) => l.startsWith("cli-exit3 "))).toMatch(/\bCOMPLETED\b.*\bFAILED \S+/);
    expect(table.find((l) => l.startsWith("cli-slow "))).toMatch(/\bCOMPLETED\b.*\bTIMED_OUT \S+/);
    const wentWrong = JSON.parse(wentWrongOut.out) as Array<{ name: string; lastRun: { status: string } }>;
    expect(wentWrong.map((j) => [j.name, j.lastRun.status]).sort()).toEqual([["cli-exit3", "FAILED"], ["cli-slow", "TIMED_OUT"]]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--last-run: "QUEUED" is not a status a last run ends with: give one or more of SUCCEEDED, FAILED, TIMED_OUT, CANCELLED, DEAD/);
  });

  it("logs -f across a dropped connection prints every byte once", async () => {
    const proxy = await cuttableProxy(new URL(t.app.url));
    try {
      const jobId = (await gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
        { i: { name: "cli-counter", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "for i in $(seq 1 60); do echo line-$i; sleep 0.1; done" } } },
        t.admin,
      )).createJob.id;
      const runId = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, t.admin)).triggerJob.id;
      // A stored login is sent only to its own server: through the proxy, the token comes from the environment (as in CI).
      const p = start(["logs", runId, "-f", "--server", proxy.url], { env: { ...t.env, KAIROS_TOKEN: t.admin } });
      let exited = false;
      void p.done.then(() => (exited = true));
      await until(() => /line-8\n/.test(p.out()) || exited, 120_000, "the first lines");
      expect(p.err()).toBe("");
      expect(proxy.cut()).toBeGreaterThan(0);
      const r = await p.done;
      expect(r.err).toMatch(/resuming the log at token \d+, byte \d+/);
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split("\n");
      expect(lines).toEqual(Array.from({ length: 60 }, (_, i) => `line-${i + 1}`));
    } finally {
      await proxy.close();
    }
  });

  it("another user's job is not found, exit 2 with a clear message", async () => {
    const [bob, adminJob] = await Promise.all([makeUser(t.app, t.admin, "cli-bob"), makeJob(t.app, t.admin, "cli-admins-only")]);
    const asBob = { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: bob.token };
    // Each refused, none changes anything: side by side.
    const refusals = [["describe", "job", adminJob], ["trigger", adminJob], ["pause", "cli-admins-only"]];
    const [own, ...refused] = await Promise.all([t.kairos(["get", "jobs", "-o", "json"], { env: asBob }), ...refusals.map((args) => t.kairos(args, { env: asBob }))]);
    for (const r of refused) {
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toMatch(/job "(cli-admins-only|[0-9a-f]+)" not found: no job of yours has that name or id/);
    }
    expect(JSON.parse(own!.out) as unknown[]).toEqual([]);
  });
});

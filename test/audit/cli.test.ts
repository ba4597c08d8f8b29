/**
 * `kairos audit` (src/cli/commands/audit.ts) against the server, in-process: the table names the
 * calls, filters reach the API, -o json is the API's entries, --verify says ok (and exits 1 on a
 * broken chain), bad flags are refused with what is allowed.
 */
import { describe, expect, it } from "vitest";
import type { Io } from "../../src/cli/output.js";
import { runCli } from "../../src/cli/program.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp();

async function kairos(token: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Io = { out: (s) => void (out += s), err: (s) => void (err += s), color: false, interactive: false, env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: token }, stdin: async () => "", now: () => Date.now() };
  const code = await runCli(argv, io);
  return { code, out, err };
}

describe("kairos audit", () => {
  it("lists the caller's calls, filtered; -o json carries the entries; --verify checks the chain", async () => {
    const u = await makeUser(t.app, t.admin, "cli-audit");
    const job = await makeJob(t.app, u.token, "cli-audited");
    await kairos(u.token, "pause", "cli-audited");

    const table = await kairos(u.token, "audit", "--since", "PT1H");
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/SEQ\s+WHEN\s+ACTOR\s+ACTION\s+OUTCOME\s+TARGETS\s+FROM/);
    expect(table.out).toContain("user:cli-audit");
    expect(table.out).toContain("pauseJob");
    expect(table.out).toContain("createJob");
    expect(table.out).not.toContain("createUser"); // the administrator's call, not this user's

    const json = await kairos(u.token, "audit", "--action", "pauseJob", "--target", job, "-o", "json");
    const entries = JSON.parse(json.out) as Array<{ action: string; targetIds: string[]; before: unknown; after: unknown }>;
    expect(entries).toEqual([expect.objectContaining({ action: "pauseJob", targetIds: [job], before: expect.objectContaining({ paused: false, status: "ACTIVE" }), after: expect.objectContaining({ paused: true, status: "PAUSED" }) })]);
    expect(Object.keys(entries[0]!.before as object).sort()).toEqual(["nextFireAt", "paused", "status", "updatedAt", "version"]);

    const verified = await kairos(t.admin, "audit", "--verify");
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/^ok: \d+ entries checked, .*; keyed since \d{4}-\d\d-\d\dT/);
    expect(verified.out).not.toContain("unkeyed");
    expect((await kairos(u.token, "audit", "--verify")).code).not.toBe(0);

    await t.app.services.mongo.db.collection("audit").updateOne({ action: "pauseJob", targetIds: job }, { $set: { outcome: "NOT_FOUND" } });
    const broken = await kairos(t.admin, "audit", "--verify");
    expect(broken.code).toBe(1);
    expect(broken.out).toContain("ALTERED at entry");
  });

  it("refuses bad flags with what is allowed", async () => {
    expect((await kairos(t.admin, "audit", "--limit", "0")).err).toContain('--limit: "0" must be a whole number from 1 to 10000');
    expect((await kairos(t.admin, "audit", "--since", "yesterday")).err).toContain("--since:");
    expect((await kairos(t.admin, "audit", "--action", "makeCoffee")).err).toContain('"makeCoffee" is not a mutation');
    // The flag is named once: parseDuration's message already carries it.
    const tooLong = await kairos(t.admin, "audit", "--since", "P99999D");
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.err).toMatch(/^kairos: --since: duration must be at most/m);
    expect(tooLong.err).not.toContain("--since: --since:");
  });
});

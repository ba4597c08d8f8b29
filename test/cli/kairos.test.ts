/**
 * The built `kairos` command line (node bin/kairos.js, after `npm run build`) as a subprocess
 * against the product started in-process: login, apply (a folder of jobs and a DAG, idempotent,
 * --dry-run, --prune), bad files, and the jobs applied here afterwards (a DAG followed, `why`).
 * Runs followed and `logs -f`: kairos-runs.test.ts; the other `why` answers: kairos-why.test.ts.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN } from "../helpers/app.js";
import { makeJob } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";
import { start, useCliFixture } from "./fixture.js";

// The tests run in order: the first logs in (the stored login the others use), the apply tests build on each other.
const t = useCliFixture();

// Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
describe("kairos command line (built, as a subprocess): login and apply", { timeout: 300_000 }, () => {
  it("logs in with --password-stdin, keeps the token 0600 in a 0700 directory, never prints it", async () => {
    const r = await t.kairos(["login", "--server", t.app.url.replace(/\/graphql$/, ""), "--username", ADMIN.username, "--password-stdin"], { input: `${ADMIN.password}\n` });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Logged in to .* as admin/);
    const dir = join(t.home, "config", "kairos");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "credentials.json"))).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(join(dir, "credentials.json"), "utf8")) as { profiles: { default: { token: string } } };
    expect(stored.profiles.default.token.length).toBeGreaterThan(20);
    expect(r.out + r.err).not.toContain(stored.profiles.default.token);
    const who = await t.kairos(["whoami", "-o", "json"]);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.out)).toMatchObject({ username: "admin", role: "ADMIN", profile: "default" });
    expect(who.out).not.toContain(stored.profiles.default.token);
  });

  it("a wrong password exits 2 with the API's message on stderr and nothing on stdout", async () => {
    const r = await start(["login", "--server", t.app.url, "--username", "admin", "--password-stdin", "--profile", "wrong"], { env: t.env, input: "not-the-password" }).done;
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/^kairos: /);
  });

  it("applies a folder of jobs and a DAG, then a second apply says no changes and exits 0", async () => {
    await writeFile(
      join(t.files, "jobs.yaml"),
      [
        "name: cli-hello",
        "schedule: {kind: CRON, cron: '0 9 * * MON-FRI', timezone: Europe/Berlin}",
        "spec: {command: 'echo hello'}",
        "---",
        "name: cli-tick",
        "tags: [demo]",
        "schedule: {kind: INTERVAL, every: PT1H}",
        "retry: {maxAttempts: 3, initial: PT5S}",
        "spec: {argv: [echo, tick], timeout: PT30S}",
        "",
      ].join("\n"),
    );
    await writeFile(join(t.files, "later.json"), JSON.stringify({ name: "cli-later", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "true" } }));
    await writeFile(
      join(t.files, "etl.yaml"),
      ["name: cli-etl", "tasks:", "  - key: extract", "    spec: {command: 'echo extract'}", "  - key: load", "    dependsOn: [extract]", "    spec: {command: 'echo load'}", ""].join("\n"),
    );
    const first = await t.kairos(["apply", "-f", t.files]);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/job cli-hello created/);
    expect(first.out).toMatch(/job cli-tick created/);
    expect(first.out).toMatch(/job cli-later created/);
    expect(first.out).toMatch(/dag cli-etl created/);
    const second = await t.kairos(["apply", "-f", t.files]);
    expect(second.code).toBe(0);
    expect(second.out).toBe("no changes (4 up to date)\n");
    const jobs = JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ id: string; name: string }>;
    expect(jobs.map((j) => j.name).sort()).toEqual(["cli-hello", "cli-later", "cli-tick"]);
    for (const j of jobs) expect(j.id).toMatch(/\S/);
  });

  it("--dry-run after an edit prints the diff per field and changes nothing", async () => {
    const path = join(t.files, "jobs.yaml");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("echo hello", "echo hello world").replace("tags: [demo]", "description: ticks").replace("maxAttempts: 3", "maxAttempts: 2"));
    const dry = await t.kairos(["apply", "-f", t.files, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('~ job cli-hello (update: 1 field)\n    ~ spec.command: "echo hello" -> "echo hello world"');
    expect(dry.out).toContain('    + description: "ticks"');
    expect(dry.out).toContain('    - tags: ["demo"]');
    expect(dry.out).toContain("    ~ retry.maxAttempts: 3 -> 2");
    expect(dry.out).toContain("0 to create, 2 to update, 0 to delete, 2 unchanged");
    // Both only read, after the first dry run: side by side.
    const [described, planned] = await Promise.all([t.kairos(["describe", "job", "cli-hello", "-o", "json"]), t.kairos(["apply", "-f", t.files, "--dry-run", "-o", "json"])]);
    const hello = JSON.parse(described.out) as { spec: { command: string } };
    expect(hello.spec.command).toBe("echo hello");
    const json = JSON.parse(planned.out) as Array<{ name: string; action: string }>;
    expect(json.find((p) => p.name === "cli-tick")?.action).toBe("update");
    const applied = await t.kairos(["apply", "-f", t.files]);
    expect(applied.code).toBe(0);
    expect((await t.kairos(["apply", "-f", t.files])).out).toBe("no changes (4 up to date)\n");
  });

  it("--prune deletes the caller's jobs and DAGs no file names, and only with --prune", async () => {
    await rm(join(t.files, "later.json"));
    const without = await t.kairos(["apply", "-f", t.files]);
    expect(without.out).toBe("no changes (3 up to date)\n");
    const pruned = await t.kairos(["apply", "-f", t.files, "--prune"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).toMatch(/job cli-later deleted/);
    const names = (JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names).not.toContain("cli-later");
    expect(names).toContain("cli-hello");
  });

  it("a bad file gets errors with the file, line and field, and nothing is applied", async () => {
    const bad = join(t.home, "bad");
    await mkdir(bad);
    await writeFile(join(bad, "bad.yaml"), ["name: cli-bad", "schedule: {kind: CRON, cron: '0 9 * * *'}", "spec:", "  command: 'true'", "  timeout: 30", "  retries: 2", ""].join("\n"));
    await writeFile(join(bad, "cron.yaml"), ["name: cli-bad-cron", "schedule:", "  kind: CRON", "  cron: '61 * * * *'", "spec: {command: 'true'}", ""].join("\n"));
    const r = await t.kairos(["apply", "-f", bad]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`${join(bad, "bad.yaml")}:5:12: spec.timeout: must be a string (got 30)`);
    expect(r.err).toMatch(new RegExp(`${join(bad, "bad.yaml")}:6:3: spec.retries: is not a field here`));
    expect(r.err).toMatch(new RegExp(`${join(bad, "cron.yaml")}:4:9: schedule.cron: `));
    const names = (JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names.filter((n) => n.startsWith("cli-bad"))).toEqual([]);
  });

  it("dag trigger --follow prints each task's transitions; dag graph prints the graph", async () => {
    const [r, g] = await Promise.all([t.kairos(["dag", "trigger", "cli-etl", "--follow"]), t.kairos(["dag", "graph", "cli-etl"])]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/extract\s+SUCCEEDED/);
    expect(r.out).toMatch(/load\s+SUCCEEDED/);
    expect(g.out).toBe("stage 1\n  extract  -> load\nstage 2\n  load     <- after extract\n");
  });

  it("why names a paused job and a pool no executor serves", async () => {
    // Two jobs that do not touch each other: the paused one and the unserved pool's, side by side.
    const paused = async () => {
      await t.kairos(["pause", "cli-hello"]);
      const [why, described] = await Promise.all([t.kairos(["why", "cli-hello", "-o", "json"]), t.kairos(["describe", "job", "cli-hello"])]);
      const answer = JSON.parse(why.out) as { reasons: Array<{ code: string }> };
      expect(answer.reasons.map((x) => x.code)).toContain("PAUSED");
      expect(described.out).toMatch(/Why it makes no runs now:\n  PAUSED +\S/);
    };
    const unserved = async () => {
      const lonely = await makeJob(t.app, t.admin, "cli-lonely", "nobody-serves-this");
      const run = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: lonely }, t.admin)).triggerJob.id;
      const why = await t.kairos(["why", run]);
      expect(why.code).toBe(0);
      expect(why.out).toMatch(/POOL_UNSERVED: no online executor serves pool "nobody-serves-this"/);
    };
    await Promise.all([paused(), unserved()]);
  });
});

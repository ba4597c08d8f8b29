/**
 * Connecting the command line as a stranger does: the global options where a stranger puts them.
 * Each test is the reproduction of one defect; the built `bin/kairos.js` runs as a subprocess
 * against the product in-process, with a private config dir for its stored logins.
 */
import { describe, expect, it } from "vitest";
import { makeJob, makeUser, PASSWORD } from "../helpers/accounts.js";
import { useCliFixture } from "./fixture.js";

const t = useCliFixture();

describe("kairos connecting as a stranger does", { timeout: 300_000 }, () => {
  it("--profile and --server work before the command as after it (before it, it was `unknown command \"--profile\"`)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-before");
    await makeJob(t.app, token, "before-job");
    const login = await t.kairos(["--profile", "early", "--server", t.app.url, "login", "--username", "stranger-before", "--password-stdin"], { input: PASSWORD });
    expect(login.code, login.err).toBe(0);
    expect(login.out).toContain('profile "early"');
    // Another profile is the current one, so only an honoured --profile finds the job.
    const other = await t.kairos(["login", "--server", t.app.url, "--username", "admin", "--password-stdin", "--profile", "other"], { input: "admin-password-for-tests" });
    expect(other.code, other.err).toBe(0);
    for (const args of [
      ["--profile", "early", "get", "jobs", "-o", "json"],
      ["--profile=early", "get", "jobs", "-o", "json"],
      ["get", "jobs", "-o", "json", "--profile", "early"],
      ["--server", t.app.url, "--profile", "early", "get", "jobs", "-o", "json"],
    ]) {
      const r = await t.kairos(args);
      expect(r.code, `kairos ${args.join(" ")}: ${r.err}`).toBe(0);
      expect((JSON.parse(r.out) as Array<{ name: string }>).map((j) => j.name), `kairos ${args.join(" ")}`).toEqual(["before-job"]);
    }
    // Between a command and its subcommand too.
    const dag = await t.kairos(["dag", "--profile", "early", "describe", "no-such-dag"]);
    expect(dag.err).toContain('DAG "no-such-dag" not found');
    const who = await t.kairos(["--profile", "early", "whoami"]);
    expect(who.out).toContain('stranger-before (user');
    const out = await t.kairos(["--profile", "early", "logout"]);
    expect(out.out).toContain('Logged out (profile "early"');

    // Where it cannot go, the error says where it does.
    const role = await t.kairos(["--profile", "early", "dev"]);
    expect(role.code).toBe(2);
    expect(role.err).toContain('--profile belongs to the command line\'s commands (login, logout, whoami, apply, get');
    expect(role.err).toContain('not to the role "dev"');
    const bare = await t.kairos(["--profile"]);
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("--profile needs a value and then a command, e.g. kairos --profile NAME get jobs");
    const port = await t.kairos(["--port", "4999", "dev"]);
    expect(port.code).toBe(2);
    expect(port.err).toContain('"--port" is an option, not a command: options go after the command (kairos dev --port 4999)');
  });
});

/**
 * The command line as a stranger uses it: defects found by trying it with wrong and odd input
 * (an empty name, a made-up audit outcome) and with the ordinary files a new user writes (a SCRIPT
 * job applied twice). Each test is the reproduction of one defect; the built `bin/kairos.js` runs
 * as a subprocess against the product in-process, credentials through KAIROS_SERVER/KAIROS_TOKEN.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { useCliFixture } from "./fixture.js";

const t = useCliFixture();

/** The command line as `token`'s user, with a private config dir. */
const as = (token: string) => (args: string[]) => t.kairos(args, { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: token } });

describe("kairos as a stranger uses it", { timeout: 300_000 }, () => {
  it("a second apply of a SCRIPT job without args says no changes (it reported spec.args: [] -> null every time)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-script");
    const kairos = as(token);
    const file = join(t.home, "script.yaml");
    await writeFile(file, ["name: py-once", "schedule: {kind: ONCE, at: '2099-01-01T00:00:00Z'}", "spec:", "  kind: SCRIPT", "  interpreter: python3", "  source: |", "    print('hi')", ""].join("\n"));
    const first = await kairos(["apply", "-f", file]);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain("job py-once created");
    const second = await kairos(["apply", "-f", file]);
    expect(second.code, second.err).toBe(0);
    expect(second.out).not.toContain("spec.args");
    expect(second.out).toContain("no changes");
    // A DAG's SCRIPT task is compared the same way.
    const dag = join(t.home, "script-dag.yaml");
    await writeFile(dag, ["name: py-dag", "tasks:", "  - key: a", "    spec: {kind: SCRIPT, interpreter: python3, source: \"print('a')\"}", ""].join("\n"));
    expect((await kairos(["apply", "-f", dag])).code).toBe(0);
    const again = await kairos(["apply", "-f", dag]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain("no changes");
  });

  it("an empty job or DAG name is refused as empty, never taken for every job (with one job: that job)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-empty");
    const only = await makeJob(t.app, token, "the-only-job");
    const kairos = as(token);
    for (const args of [["delete", ""], ["trigger", ""], ["pause", ""], ["describe", "job", ""], ["why", ""], ["get", "runs", "--job", ""], ["dag", "delete", " "]]) {
      const r = await kairos(args);
      expect(r.code, `kairos ${args.join(" ")}: ${r.out}${r.err}`).toBe(2);
      expect(r.err, `kairos ${args.join(" ")}`).toMatch(/is named by its name or its 24-character id, and " ?" is empty/);
    }
    // The only job is still there, active, and was never triggered.
    const { job } = await gqlOk<{ job: { status: string; runs: { edges: unknown[] } } }>(t.app.url, `query($id: ID!) { job(id: $id) { status runs(first: 5) { edges { node { id } } } } }`, { id: only }, token);
    expect(job.status).toBe("ACTIVE");
    expect(job.runs.edges).toHaveLength(0);
    // An empty --status is refused like any other value that is not a status.
    const status = await kairos(["get", "runs", "--status", ""]);
    expect(status.code).toBe(2);
    expect(status.err).toContain('--status: "" is not one of PENDING');
    // A list (as get jobs --last-run and get nodes --status take) is told to be one status at a time.
    const list = await kairos(["get", "runs", "--status", "failed,timed_out"]);
    expect(list.code).toBe(2);
    expect(list.err).toContain('--status: runs are listed by one status at a time (got "failed,timed_out")');
  });

  it("a YAML alias bomb and a file that is not UTF-8 are refused with the file and place (the bomb printed yaml's ReferenceError and stack; a Latin-1 name was applied with U+FFFD in it)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-files");
    const kairos = as(token);
    const bomb = join(t.home, "bomb.yaml");
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) levels.push(`${"abcdefghi"[i]}: &${"abcdefghi"[i]} [${Array(10).fill(`*${"abcdefghi"[i - 1]}`).join(", ")}]`);
    await writeFile(bomb, [...levels, "name: bomb", "schedule: {kind: ONCE}", "spec: {command: 'true'}", "description: *i", ""].join("\n"));
    const b = await kairos(["apply", "-f", bomb, "--dry-run"]);
    expect(b.code).toBe(1);
    expect(b.err).not.toContain("ReferenceError");
    expect(b.err.trim()).toBe(`kairos: ${bomb}:1:1: (syntax): its aliases (*name) expand to too much: at most 100 uses of anchors, counting those inside other anchors`);

    const latin1 = join(t.home, "latin1.yaml");
    await writeFile(latin1, Buffer.from("schedule: {kind: ONCE}\nname: caf\xe9-report\nspec: {command: 'true'}\n", "latin1"));
    const l = await kairos(["apply", "-f", latin1]);
    expect(l.code).toBe(1);
    expect(l.err.trim()).toBe(`kairos: ${latin1}:2:10: (encoding): is not UTF-8 (byte 0xe9): save the file as UTF-8`);
    const { jobs } = await gqlOk<{ jobs: { edges: unknown[] } }>(t.app.url, `{ jobs(first: 5) { edges { node { name } } } }`, {}, token);
    expect(jobs.edges).toHaveLength(0);
  });

  it("an audit outcome that no call can have is refused, naming the outcomes there are (it listed nothing, exit 0)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-audit");
    await makeJob(t.app, token, "audited");
    const kairos = as(token);
    const bad = await kairos(["audit", "--outcome", "maybe"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('kairos: --outcome: "MAYBE" is not an outcome of a call; allowed: OK, UNKNOWN, UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT, NOT_FOUND');
    const api = await gql(t.app.url, `{ auditLog(filter: { outcome: "" }) { edges { node { seq } } } }`, {}, token);
    expect(api.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(api.errors?.[0]?.extensions?.field).toBe("filter.outcome");
    // An empty filter is refused naming the flag (--target "" listed nothing, --since "" was dropped).
    for (const flag of ["--target", "--since", "--action", "--actor", "--outcome"]) {
      const empty = await kairos(["audit", flag, ""]);
      expect(empty.code, `${flag} "": ${empty.out}`).toBe(2);
      expect(empty.err).toContain(`${flag}: is empty; give a value, or leave ${flag} out for no filter`);
    }
    // A real outcome still lists.
    const ok = await kairos(["audit", "--outcome", "ok", "-o", "json"]);
    expect(ok.code, ok.err).toBe(0);
    expect((JSON.parse(ok.out) as Array<{ action: string; outcome: string }>).map((e) => [e.action, e.outcome])).toContainEqual(["createJob", "OK"]);
  });
});

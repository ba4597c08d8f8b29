/**
 * The attack suite (issue #11): each attack is a job submitted through the API by an ordinary USER,
 * and each test fails if the attack works. After every attack the run has a clear status, and the
 * executor and other users' runs carry on (checked at the end, and by the victim's run alongside).
 *
 * Runs with KAIROS_SANDBOX=bubblewrap: on a machine without bubblewrap the app refuses to start and
 * this file fails, rather than passing against unsandboxed runs.
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";
import { FINAL_STATUSES, finishedRun, submitJob } from "../helpers/job-runs.js";

const CANARY_ENV = `canary-${Math.random().toString(36).slice(2)}`;
let app: TestApp;
let mallory: string;
let victim: string;
let canary: Server;
let canaryPort = 0;
let canaryHits = 0;
let jwtSecret: string;

beforeAll(async () => {
  // A secret in the server's own environment: no run may ever see it.
  process.env.KAIROS_TEST_CANARY_SECRET = CANARY_ENV;
  app = await startTestApp({ env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EXECUTOR_SLOTS: "4" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  mallory = (await makeUser(app, admin, "mallory")).token;
  victim = (await makeUser(app, admin, "victim")).token;
  jwtSecret = readFileSync(join(app.config.dataDir, "jwt-secret"), "utf8").trim();
  canary = createServer((s) => {
    canaryHits++;
    s.destroy();
  });
  await new Promise<void>((r) => canary.listen(0, "127.0.0.1", r));
  canaryPort = (canary.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  delete process.env.KAIROS_TEST_CANARY_SECRET;
  canary?.close();
  await app?.dispose();
});

const FINAL = FINAL_STATUSES;
const submit = (token: string, spec: Record<string, unknown>) => submitJob(app.url, token, spec);
const finished = (token: string, jobId: string) => finishedRun(app.url, token, jobId);

const run = async (spec: Record<string, unknown>, token = mallory) => finished(token, await submit(token, spec));
const sh = (command: string, extra: Record<string, unknown> = {}) => run({ command, ...extra });

/** Live processes on the host whose command line contains `marker`. */
function hostProcesses(marker: string): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        if (/^\d+ \(.*\) Z/.test(stat)) return false;
        return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function noSecrets(out: string | null): void {
  expect(out ?? "").not.toContain(jwtSecret);
  expect(out ?? "").not.toContain(ADMIN.password);
  expect(out ?? "").not.toContain(CANARY_ENV);
}

describe.runIf(process.platform === "linux")("a USER's job cannot reach beyond its own run", () => {
  it("runs sandboxed: the node says so, and the job sees an unprivileged user and only its own processes", async () => {
    const nodes = await gqlOk<{ nodes: { edges: Array<{ node: { isolation: { mode: string; enforced: string[] } } }> } }>(app.url, `{ nodes { edges { node { isolation { mode enforced } } } } }`, {}, mallory);
    expect(nodes.nodes.edges[0]!.node.isolation.mode).toBe("BUBBLEWRAP");
    const r = await sh("id -u; ps -e -o pid= | wc -l; echo $PATH; pwd");
    expect(r.status).toBe("SUCCEEDED");
    const [uid, procs, path, pwd] = r.outputTail!.trim().split("\n");
    expect(uid).not.toBe("0");
    expect(Number(procs)).toBeLessThanOrEqual(4); // bwrap's init, sh, ps, wc
    expect(path).toBe("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    expect(pwd).toBe("/work");
  });

  it("cannot read /etc/shadow, the data dir, the JWT secret or the server's environment", async () => {
    const dataDir = app.config.dataDir;
    const r = await sh(
      [
        "cat /etc/shadow",
        `cat ${dataDir}/jwt-secret`,
        "cat ../../jwt-secret ../jwt-secret",
        `ls -la ${dataDir} ${dataDir}/mongo`,
        "cat /proc/1/environ /proc/$PPID/environ /proc/self/environ | tr '\\0' '\\n'",
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done",
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done",
        "env",
        "true",
      ].join("; "),
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).not.toMatch(/^root:/m);
    expect(r.outputTail).toMatch(/\/etc\/shadow: No such file/);
    noSecrets(r.outputTail);
    // The job's own environment is what it declared plus the documented variables.
    const env = await sh("env | cut -d= -f1 | sort | tr '\\n' ' '", { env: { MINE: "1" } });
    expect(env.outputTail!.trim().split(" ").sort()).toEqual(
      ["HOME", "KAIROS_ATTEMPT", "KAIROS_FENCING_TOKEN", "KAIROS_JOB_ID", "KAIROS_NODE_ID", "KAIROS_RUN_ID", "KAIROS_SCHEDULED_FOR", "LANG", "MINE", "PATH", "PWD", "TMPDIR"].sort(),
    );
  });

  it("cannot see another tenant's running job: its environment, processes or files", async () => {
    const secret = `victim-secret-${Math.random().toString(36).slice(2)}`;
    const victimJob = await submit(victim, { command: `echo ${secret} > /work/private.txt; echo ${secret} > /tmp/private.txt; sleep 4; cat /work/private.txt`, env: { VICTIM_SECRET: secret } });
    await new Promise((r) => setTimeout(r, 1_500)); // the victim's run is going
    const r = await sh(
      [
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done",
        "cat /tmp/*.txt /work/*.txt",
        `find / -xdev -name private.txt 2>/dev/null | head`,
        `ls -R ${app.config.dataDir}/work 2>&1 | head -20`,
        "true",
      ].join("; "),
    );
    expect(r.outputTail ?? "").not.toContain(secret);
    const v = await finished(victim, victimJob);
    expect(v.status).toBe("SUCCEEDED");
    expect(v.outputTail).toContain(secret);
  });

  it("cannot connect to Redis, MongoDB, the API or a listener on the host's loopback", async () => {
    const mongoPort = new URL(app.mongoUrl).port;
    const apiPort = new URL(app.url).port;
    const ports = [canaryPort, Number(mongoPort), Number(apiPort), 6379];
    const r = await sh(ports.map((p) => `(timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${p}' && echo CONNECTED-${p} || echo refused-${p})`).join("; "));
    expect(r.outputTail).not.toMatch(/CONNECTED/);
    for (const p of ports) expect(r.outputTail).toContain(`refused-${p}`);
    expect(canaryHits).toBe(0);
    const net = await sh("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '");
    expect(net.outputTail!.trim()).toBe("lo");
  });

  it("cannot write outside its own directories", async () => {
    const probe = join(app.config.dataDir, "pwned");
    const r = await sh(`touch /usr/pwned /etc/pwned /pwned ${probe} 2>&1; touch /work/ok /tmp/ok && echo own-dirs-writable`);
    expect(r.outputTail).toContain("own-dirs-writable");
    expect(r.outputTail).toMatch(/Read-only file system|Permission denied|No such file/);
    expect(existsSync(probe)).toBe(false);
    expect(existsSync("/usr/pwned")).toBe(false);
  });

  it("cannot kill its executor, by pid or by name; the run ends with a clear status and the node carries on", async () => {
    const r = await sh("kill -9 $PPID; kill -9 1; pkill -9 node; pkill -9 -f kairos; killall -9 node 2>/dev/null; sleep 0.5; echo still-here");
    expect(["SUCCEEDED", "FAILED"]).toContain(r.status);
    const after = await sh("echo next-run-ok");
    expect(after.status).toBe("SUCCEEDED");
    expect(after.outputTail).toContain("next-run-ok");
  });

  it("leaves nothing running after its run: setsid and double-fork escapes die with it", async () => {
    const marker = `31.${Math.floor(Math.random() * 1e6)}`;
    const r = await sh(`setsid sleep ${marker} & (sleep ${marker} &) & nohup sleep ${marker} >/dev/null 2>&1 & echo started`);
    expect(r.status).toBe("SUCCEEDED");
    await new Promise((res) => setTimeout(res, 500));
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });

  it("a fork bomb meets its pids limit; the run ends and the node keeps going", async () => {
    const marker = `32.${Math.floor(Math.random() * 1e6)}`;
    const jobId = await submit(mallory, { command: `i=0; while [ $i -lt 500 ]; do sleep ${marker} & i=$((i+1)); done 2>/dev/null; sleep 1; ps -e | wc -l`, resources: { pids: 64 }, timeout: "PT10S" });
    // While it runs, it never has more processes than its limit.
    let most = 0;
    for (let i = 0; i < 10; i++) {
      most = Math.max(most, hostProcesses(`sleep ${marker}`).length);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await finished(mallory, jobId);
    expect(most).toBeLessThanOrEqual(64);
    expect(Number(r.outputTail!.trim().split("\n").at(-1))).toBeLessThanOrEqual(65);
    expect(FINAL.has(r.status)).toBe(true);
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });

  it("allocating past its memory limit ends the run OOM_KILLED, with its peak memory recorded", async () => {
    const r = await sh("head -c 300000000 /dev/zero | tail > /dev/null", { resources: { memoryMb: 64 } });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^OOM_KILLED: .*memoryMb 64/);
    expect(r.usage?.peakMemoryMb).toBeGreaterThan(50);
    expect(r.usage?.peakMemoryMb).toBeLessThanOrEqual(64.5);
  });

  it("cannot fill the disk past its cap: one big file is stopped at once, many files within a second", async () => {
    const big = await sh("head -c 100000000 /dev/zero > /work/big", { resources: { diskMb: 8 } });
    expect(big.status).toBe("FAILED");
    expect(big.error).toMatch(/exit code 153|SIGXFSZ/); // 128 + SIGXFSZ: the write past the cap was refused
    const many = await sh("for i in $(seq 200); do head -c 1000000 /dev/zero > /tmp/f$i; sleep 0.02; done; echo wrote-all", { resources: { diskMb: 16 } });
    expect(many.status).toBe("FAILED");
    expect(many.error).toMatch(/^DISK_LIMIT/);
    expect(many.outputTail ?? "").not.toContain("wrote-all");
  });

  it("refuses NUL bytes in command, argv and env at submission, naming the field", async () => {
    const create = (spec: Record<string, unknown>) =>
      gql(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: `nul-${Math.random()}`, schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", ...spec } } }, mallory);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ command: "echo a\u0000b" }, "spec.command"],
      [{ argv: ["echo", "a\u0000b"] }, "spec.argv[1]"],
      [{ command: "true", env: { X: "a\u0000b" } }, "spec.env.X"],
      [{ command: "true", env: { LD_PRELOAD: "/tmp/x.so" } }, "spec.env"],
      [{ command: "true", env: { KAIROS_ADMIN_PASSWORD: "x" } }, "spec.env"],
    ];
    for (const [spec, field] of cases) {
      const r = await create(spec);
      expect(r.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.field).toBe(field);
    }
  });

  it("asks for more than any node allows, or for network access no node gives: refused at submission with the reason", async () => {
    const create = (spec: Record<string, unknown>) =>
      gql(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: `big-${Math.random()}`, schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "true", ...spec } } }, mallory);
    const huge = await create({ resources: { memoryMb: 4_000_000 } });
    expect(huge.errors?.[0]?.extensions?.field).toBe("spec.resources");
    expect(huge.errors?.[0]?.message).toMatch(/no node of pool "default" takes a run of .*memoryMb 4000000/);
    const egress = await create({ network: "EGRESS" });
    expect(egress.errors?.[0]?.extensions?.field).toBe("spec.network");
  });

  it("after every attack, another user's job still runs normally", async () => {
    const r = await run({ command: "echo victim-fine" }, victim);
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("victim-fine");
  });
});

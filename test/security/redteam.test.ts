/**
 * Red-team attacks beyond test/security/attacks.test.ts: each is a job submitted through the API by
 * an ordinary USER, and each test fails while the attack works. Attacks the sandbox already holds
 * against are kept as ordinary tests when what they guard is worth guarding.
 *
 * Runs with KAIROS_SANDBOX=bubblewrap (the app refuses to start without bubblewrap).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/domain/errors.js";
import { Sandbox } from "../../src/executor/sandbox/sandbox.js";
import { silentLogger } from "../../src/support/log.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";

let app: TestApp;
let mallory: string;
let victim: string;
let jwtSecret: string;
let workRoot: string;
const ABSTRACT = `kairos-redteam-${Math.random().toString(36).slice(2)}`;
let abstractServer: Server;
let abstractHits = 0;

beforeAll(async () => {
  // One slot: every run goes to the same slot, so what one run leaves behind the next one meets.
  app = await startTestApp({ env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EXECUTOR_SLOTS: "1" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  mallory = (await makeUser(app, admin, "mallory")).token;
  victim = (await makeUser(app, admin, "victim")).token;
  jwtSecret = readFileSync(join(app.config.dataDir, "jwt-secret"), "utf8").trim();
  const nodes = await gqlOk<{ nodes: { edges: Array<{ node: { id: string } }> } }>(app.url, `{ nodes { edges { node { id } } } }`, {}, admin);
  // The data dir is private (mkdtemp, 0700), so the executor puts run directories under the system's tmp.
  workRoot = join(tmpdir(), `kairos-runs-${nodes.nodes.edges[0]!.node.id.slice(-8)}`);
  abstractServer = createServer((s) => {
    abstractHits++;
    s.destroy();
  });
  await new Promise<void>((r) => abstractServer.listen(`\0${ABSTRACT}`, r));
}, 60_000);

afterAll(async () => {
  abstractServer?.close();
  await app?.dispose();
});

const submit = (token: string, spec: Record<string, unknown>) => submitJob(app.url, token, spec);
const finished = (token: string, jobId: string) => finishedRun(app.url, token, jobId);

const run = async (spec: Record<string, unknown>, token = mallory) => finished(token, await submit(token, spec));
const sh = (command: string, extra: Record<string, unknown> = {}, token = mallory) => run({ command, ...extra }, token);
const py = (program: string, extra: Record<string, unknown> = {}, token = mallory) => run({ argv: ["python3", "-c", program], ...extra }, token);

/** Bytes in use under the node's slot directories, measured on the host by `du` (which handles any depth). */
function slotBytes(): number {
  const out = execFileSync("du", ["-s", "-B1", "-x", workRoot], { encoding: "utf8" });
  return Number(out.split(/\s/)[0]);
}

/** A victim's run in the same (only) slot: what the previous run left is what it sees. */
async function victimSeesCleanSlot(): Promise<void> {
  const r = await sh("ls -A /work /tmp | grep -v '^/' | grep -v '^$' | wc -l; stat -c '%a %u' /work /tmp", {}, victim);
  expect(r.status).toBe("SUCCEEDED");
  const [count, work, tmp] = r.outputTail!.trim().split("\n");
  expect(Number(count)).toBe(0);
  expect(work).toBe("700 1000");
  expect(tmp).toBe("700 1000");
}

describe.runIf(process.platform === "linux")("red team: a USER's job cannot abuse its sandbox", () => {
  it("inherits no descriptor the executor opened (its MongoDB, Redis and API sockets, its files)", async () => {
    const r = await py("import os\nfor f in sorted(int(f) for f in os.listdir('/proc/self/fd')):\n  print(f, os.readlink('/proc/self/fd/%d' % f) if f > 3 else '')");
    expect(r.status).toBe("SUCCEEDED");
    const extra = r.outputTail!.trim().split("\n").map((l) => l.trim().split(" ")).filter(([fd]) => Number(fd) > 3);
    // Everything Node opens is close-on-exec; what can still arrive is only what the executor's own
    // launcher leaked to it without close-on-exec (see the report: the wrapper does not close those).
    const inheritedByExecutor = new Set(
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          const flags = /^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
          return flags !== undefined && (parseInt(flags, 8) & 0o2000000) === 0;
        } catch {
          return false;
        }
      }),
    );
    for (const [fd, target] of extra) {
      expect(target, `fd ${fd} -> ${target}`).not.toMatch(/^socket:|^\//);
      expect(inheritedByExecutor.has(fd!), `fd ${fd} -> ${target} was opened by the executor`).toBe(true);
    }
    // The run's init (pid 1 inside) holds nothing of the executor's either: a bubblewrap of its own
    // holds its stdio at most; the launcher's (launcher.c) is not dumpable, so the run cannot even
    // list what it holds (its control socket to the launcher).
    const init = await sh("ls /proc/1/fd >/dev/null 2>&1 && ls -l /proc/1/fd | grep -c socket: || echo unreadable");
    const seen = init.outputTail!.trim();
    if (seen !== "unreadable") expect(Number(seen)).toBeLessThanOrEqual(3); // its own stdio
  });

  it("cannot make nested user namespaces (no capabilities regained inside, no extra kernel attack surface)", async () => {
    const r = await sh("unshare -r id 2>&1; unshare -U true 2>&1 && echo NESTED-USERNS; bwrap --ro-bind / / --unshare-user true 2>&1 && echo NESTED-BWRAP; true");
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).not.toContain("uid=0(root)");
    expect(r.outputTail).not.toContain("NESTED-USERNS");
    expect(r.outputTail).not.toContain("NESTED-BWRAP");
  });

  it("sees no /sys, no cgroup files, no host /proc/sys writes, and cannot change the hostname or the clock", async () => {
    const r = await sh(
      [
        "ls /sys 2>&1",
        "ls /sys/fs/cgroup 2>&1",
        "sed 's/^/cgroup /' /proc/self/cgroup",
        "echo evil > /proc/sys/kernel/hostname 2>&1",
        "echo 1 > /proc/sys/vm/drop_caches 2>&1",
        "echo 1 > /proc/sysrq-trigger 2>&1",
        "hostname evil 2>&1",
        "date -s '2001-01-01' 2>&1",
        "hostname",
        "cat /proc/kcore 2>&1 | head -c 10 | wc -c",
        "true",
      ].join("; "),
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toMatch(/\/sys.: No such file/);
    // Its own cgroup namespace: only "/", never the executor's path.
    const groups = r.outputTail!.split("\n").filter((l) => l.startsWith("cgroup "));
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) expect(g).toMatch(/:\/$/);
    expect(r.outputTail!.trim().split("\n")).toContain("kairos-run");
    expect(readFileSync("/proc/sys/kernel/hostname", "utf8")).not.toContain("evil");
    expect(Math.abs(Date.now() - new Date().getTime())).toBeLessThan(1000);
    expect(new Date().getFullYear()).toBeGreaterThan(2001);
  });

  it("cannot reach an abstract unix socket of the host (the network namespace holds them too)", async () => {
    const r = await py(
      `import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n  s.connect("\\0${ABSTRACT}"); print("CONNECTED")\nexcept Exception as e:\n  print("refused", e)`,
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("refused");
    expect(abstractHits).toBe(0);
  });

  it("symlinks to the host left in /work and /tmp are removed, never followed, by the cleaner and the disk walk", async () => {
    const dataDir = app.config.dataDir;
    const r = await sh(`ln -s / /work/root; ln -s ${dataDir} /tmp/data; ln -s ${dataDir}/jwt-secret /work/secret; ln -s /etc /work/etc; mkdir /work/d; ln -s /usr /work/d/usr; head -c 4000000 /dev/zero > /work/fill; sleep 1.5; echo planted`, { resources: { diskMb: 8 } });
    expect(r.status).toBe("SUCCEEDED");
    expect(readFileSync(join(dataDir, "jwt-secret"), "utf8").trim()).toBe(jwtSecret);
    expect(existsSync("/etc/passwd")).toBe(true);
    await victimSeesCleanSlot();
  });

  it("what one run leaves behind (setuid file, FIFO, chmod 000 directories, odd modes) is gone before the next user's run", async () => {
    const r = await sh(
      [
        "cp /bin/sh /work/suid && chmod 4755 /work/suid",
        "mkfifo /tmp/fifo /work/fifo",
        "mkdir -p /work/locked/inner /tmp/locked && touch /work/locked/inner/f && chmod 000 /work/locked/inner /work/locked /tmp/locked",
        "chmod 777 /tmp",
        "chmod 000 /work",
        "echo left",
      ].join(" && "),
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("left");
    await victimSeesCleanSlot();
  });

  it("paths deeper than PATH_MAX on the host are counted against the disk cap and cleaned after the run", async () => {
    // Directories 250 characters long, 24 deep (~6 KB of path): beyond what a path-based walker
    // (lstat of the full path) or remover (node's fs.rm) can reach on the host.
    const program = [
      "import os, time",
      "os.chdir('/work')",
      "for i in range(24):",
      "    os.mkdir('d' * 250); os.chdir('d' * 250)",
      "for i in range(40):",
      "    open('f%d' % i, 'wb').write(b'\\1' * (7 * 1048576))",
      "    time.sleep(0.05)",
      "print('WROTE-280MB', flush=True)",
      "time.sleep(3)",
    ].join("\n");
    const r = await py(program, { resources: { diskMb: 8 } });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^DISK_LIMIT/);
    expect(r.outputTail ?? "").not.toContain("WROTE-280MB");
    // Nothing of it is left on the host, and the next user's run gets a clean slot.
    expect(slotBytes()).toBeLessThan(1_000_000);
    await victimSeesCleanSlot();
  });

  it("files unlinked while open still count against the disk cap", async () => {
    // Each file stays under RLIMIT_FSIZE (diskMb); unlinked, the directory walk never sees them,
    // while the host's disk holds all of them until the run ends.
    const program = [
      "import os, time",
      "held = []",
      "for i in range(30):",
      "    f = open('/tmp/x%d' % i, 'wb'); os.unlink('/tmp/x%d' % i)",
      "    f.write(b'\\1' * (7 * 1048576)); f.flush(); held.append(f)",
      "print('HELD-210MB', flush=True)",
      "time.sleep(10)",
      "print('HELD-ALL-ALONG', flush=True)",
    ].join("\n");
    const r = await py(program, { resources: { diskMb: 8 } });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^DISK_LIMIT/);
    // Killed within the supervisor's next checks, long before it could hold the files to its end
    // (how many it wrote before that depends on the disk's speed, so that is not asserted).
    expect(r.outputTail ?? "").not.toContain("HELD-ALL-ALONG");
  });

  it("an argument or environment larger than exec allows is refused at submission; the largest allowed runs; the node carries on", async () => {
    const big = "A".repeat(200_000); // > MAX_ARG_STRLEN (128 KiB): execve would refuse it at every start
    for (const spec of [{ argv: ["echo", big] }, { command: "echo hi", env: { BIG: big } }]) {
      const r = await gql(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: "too-big", schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", ...spec } } }, mallory);
      expect(r.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.message).toMatch(/come to 20\d{4} bytes; at most 65536 \(64 KiB\) in all/);
    }
    // Just inside both limits at once: the kernel takes it, the program sees all of it.
    const env = { BIG: "B".repeat(60_000) };
    const ok = await run({ argv: ["sh", "-c", 'printf "%s %s" "${#BIG}" "${#0}"', "C".repeat(60_000)], env });
    expect(ok.status).toBe("SUCCEEDED");
    expect(ok.outputTail).toContain("60000 60000");
    const after = await sh("echo next-ok", {}, victim);
    expect(after.status).toBe("SUCCEEDED");
    expect(after.outputTail).toContain("next-ok");
  });

  it("a flood of output keeps only the tail: the executor's memory stays bounded", async () => {
    const before = process.memoryUsage().rss;
    const r = await sh("head -c 400000000 /dev/zero | base64 -w 0; echo; echo END-OF-FLOOD", { timeout: "PT40S", resources: { cpu: 1 } });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail!.length).toBeLessThanOrEqual(16 * 1024);
    expect(r.outputTail).toContain("END-OF-FLOOD");
    expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1048576);
  }, 90_000);

  it("after every attack, another user's job still runs normally", async () => {
    const r = await sh("echo victim-fine", {}, victim);
    expect(r.error).toBeNull();
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("victim-fine");
    expect(statSync(app.config.dataDir).isDirectory()).toBe(true);
    expect(readdirSync(workRoot).length).toBeGreaterThan(0);
  });
});

describe.runIf(process.platform === "linux")("no silent downgrade to unsandboxed runs", () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });
  const open = (mode: "bubblewrap" | "auto", nofile?: number) => {
    const warnings: string[] = [];
    const log = silentLogger();
    log.warn = ((_: unknown, msg: string) => void warnings.push(msg)) as typeof log.warn;
    const tag = `rt${Math.random().toString(36).slice(2, 8)}`;
    roots.push(join(tmpdir(), `kairos-redteam-${tag}`));
    const sandbox = Sandbox.open({ mode, workRoot: roots.at(-1)!, slots: 1, uidBase: 61_000, roPaths: [], nodeTag: tag, log, nofile });
    return { sandbox, warnings };
  };

  it("the executor role defaults to bubblewrap; only dev may fall back", () => {
    expect(loadConfig("executor", { MONGO_URL: "mongodb://127.0.0.1:1/x", REDIS_URL: "redis://127.0.0.1:1" }).sandbox).toBe("bubblewrap");
    expect(loadConfig("dev", {}).sandbox).toBe("auto");
    expect(loadConfig("executor", { MONGO_URL: "mongodb://127.0.0.1:1/x", REDIS_URL: "redis://127.0.0.1:1", KAIROS_SANDBOX: "none" }).sandbox).toBe("none");
    expect(() => loadConfig("executor", { MONGO_URL: "mongodb://127.0.0.1:1/x", REDIS_URL: "redis://127.0.0.1:1", KAIROS_SANDBOX: "bwrap" })).toThrow(ConfigError);
  });

  it("KAIROS_SANDBOX=bubblewrap refuses to start when a sandbox cannot be made, naming KAIROS_SANDBOX=none; dev falls back loudly", async () => {
    // An open-files limit above the hard limit makes the sandbox's wrapper fail (exit 125) in the self-test.
    expect(() => open("bubblewrap", 2 ** 40)).toThrow(/KAIROS_SANDBOX=bubblewrap: the sandbox cannot be set up.*KAIROS_SANDBOX=none/);
    const { sandbox, warnings } = open("auto", 2 ** 40);
    try {
      expect(sandbox.mode).toBe("none");
      expect(sandbox.isolation.mode).toBe("NONE");
      expect(sandbox.isolation.notes.join(" ")).toMatch(/no sandbox/);
      expect(warnings.join(" ")).toMatch(/NO SANDBOX/);
    } finally {
      await sandbox.close();
    }
  });

  it("a working node says it forbids nested user namespaces", async () => {
    const { sandbox } = open("bubblewrap");
    try {
      expect(sandbox.isolation.mode).toBe("BUBBLEWRAP");
      expect(sandbox.isolation.enforced).toContain("no-nested-user-namespaces");
    } finally {
      await sandbox.close();
    }
  });
});

/**
 * Attacks on the sandbox kept per slot (src/executor/sandbox/launcher.c): a slot's bubblewrap now
 * outlives each run, so anything a run can leave in it, the next user's run in the slot would meet.
 * One slot: every run lands in the same sandbox. Each test fails while its attack works.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";

let app: TestApp;
let mallory: string;
let victim: string;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EXECUTOR_SLOTS: "1" } });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  mallory = (await makeUser(app, admin, "mallory")).token;
  victim = (await makeUser(app, admin, "victim")).token;
}, 60_000);

afterAll(async () => {
  await app?.dispose();
});

const sh = async (command: string, token = mallory) => finishedRun(app.url, token, await submitJob(app.url, token, { command }));
const py = async (program: string, token = mallory) => finishedRun(app.url, token, await submitJob(app.url, token, { argv: ["python3", "-c", program] }));

describe.runIf(process.platform === "linux")("the sandbox kept per slot: a run leaves nothing for the next", () => {
  it("runs in the kept sandbox (the node says so)", async () => {
    const r = await gqlOk<{ nodes: Array<{ isolation: { enforced: string[]; notes: string[] } }> }>(app.url, `{ nodes { isolation { enforced notes } } }`, {}, admin);
    expect(r.nodes[0]!.isolation.enforced).toContain("sandbox-kept-per-slot");
  });

  it("cannot write to the sandbox's root, /dev or /etc, and what it puts in /dev/shm is gone for the next user", async () => {
    const a = await sh("for p in /x /dev/x /etc/x /.kairos/x /kairos/x; do touch $p 2>/dev/null && echo WROTE-$p; done; echo secret > /dev/shm/left && echo shm-written; ls -A /.kairos | wc -l");
    expect(a.status).toBe("SUCCEEDED");
    expect(a.outputTail).not.toContain("WROTE-");
    expect(a.outputTail).toContain("shm-written");
    expect(a.outputTail!.trim().split("\n").pop()).toBe("0"); // the slot's directory and the zygote are hidden
    const b = await sh("ls -A /dev/shm | wc -l; cat /dev/shm/left 2>&1 || true", victim);
    expect(b.status).toBe("SUCCEEDED");
    expect(b.outputTail!.trim().split("\n")[0]).toBe("0");
    expect(b.outputTail).not.toContain("secret");
  });

  it("System V shared memory and message queues it makes are gone for the next user (an IPC namespace per run)", async () => {
    const made = await py(
      [
        "import ctypes",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "shm = libc.shmget(0x4b41, 4096, 0o1666)",
        "msg = libc.msgget(0x4b42, 0o1666)",
        "print('made', shm >= 0, msg >= 0)",
        "print(open('/proc/sysvipc/shm').read().count('\\n'), open('/proc/sysvipc/msg').read().count('\\n'))",
      ].join("\n"),
    );
    expect(made.status).toBe("SUCCEEDED");
    expect(made.outputTail).toContain("made True True");
    expect(made.outputTail).toContain("2 2"); // header + its own
    const seen = await sh("tail -n +2 /proc/sysvipc/shm | wc -l; tail -n +2 /proc/sysvipc/msg | wc -l; tail -n +2 /proc/sysvipc/sem | wc -l", victim);
    expect(seen.outputTail!.trim().split("\n")).toEqual(["0", "0", "0"]);
  });

  it("cannot use the kernel keyring (not namespaced: a key would outlive the run)", async () => {
    const r = await py(
      [
        "import ctypes, os",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "nr = {'x86_64': 248, 'aarch64': 217}[os.uname().machine]",
        "k = libc.syscall(nr, b'user', b'kairos-left', b'secret', 6, ctypes.c_int(-4))", // KEY_SPEC_USER_KEYRING
        "print('add_key', k, os.strerror(ctypes.get_errno()))",
      ].join("\n"),
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("add_key -1 Operation not permitted");
  });

  it("holds no capability, sees only its own processes, and cannot signal the sandbox's", async () => {
    const r = await sh("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; ls /proc | grep -cE '^[0-9]+$'; cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c '[.]kairos/zygote' || true; kill -9 1 2>&1; echo alive");
    expect(r.status).toBe("SUCCEEDED");
    for (const line of r.outputTail!.split("\n").filter((l) => l.startsWith("Cap"))) expect(line).toMatch(/:\s+0{16}$/);
    const [procs, zygotes] = r.outputTail!.split("\n").filter((l) => /^\d+$/.test(l.trim()));
    expect(Number(procs)).toBeLessThanOrEqual(5); // its init, the shell, ls, grep (and a moment's pipe partner)
    expect(Number(zygotes)).toBe(0);
    expect(r.outputTail).toContain("alive");
  });

  it("a slot sandbox that dies (killed from the host) is made again for the next run", async () => {
    const pids = execFileSync("pgrep", ["-f", "/.kairos/zygote zygote"], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(Number(pid), "SIGKILL");
    const r = await sh("echo after-restart", victim);
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("after-restart");
  });
});

/**
 * Attacks on the sandbox kept per slot (src/executor/sandbox/launcher.c): a slot's bubblewrap now
 * outlives each run, so anything a run can leave in it, the next user's run in the slot would meet.
 * One slot: every run lands in the same sandbox. Each test fails while its attack works.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launcherBinary } from "../../src/executor/sandbox/launcher.js";
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

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
};
/** Pids whose parent is `pid`. */
const childrenOf = (pid: number): number[] =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return Number(readFileSync(`/proc/${n}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);

const sh = async (command: string, token = mallory) => finishedRun(app.url, token, await submitJob(app.url, token, { command }));
const py = async (program: string, token = mallory) => finishedRun(app.url, token, await submitJob(app.url, token, { argv: ["python3", "-c", program] }));

describe.runIf(process.platform === "linux")("the sandbox kept per slot: a run leaves nothing for the next", () => {
  it("runs in the kept sandbox (the node says so)", async () => {
    const r = await gqlOk<{ nodes: { edges: Array<{ node: { isolation: { enforced: string[]; notes: string[] } } }> } }>(app.url, `{ nodes { edges { node { isolation { enforced notes } } } } }`, {}, admin);
    expect(r.nodes.edges[0]!.node.isolation.enforced).toContain("sandbox-kept-per-slot");
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

  it("what it writes on /work and /tmp themselves (extended attributes, a default ACL) is gone for the next user", async () => {
    const left = await py(
      [
        "import os",
        "for d in ('/work', '/tmp'):",
        "    os.setxattr(d, 'user.left', b'secret')",
        "    os.setxattr(d, 'system.posix_acl_default', bytes.fromhex('02000000' + '0100070000000000' + '0400070000000000' + '1000070000000000' + '2000070000000000'))",
        "print('set', os.listxattr('/work'))",
      ].join("\n"),
    );
    expect(left.status).toBe("SUCCEEDED");
    expect(left.outputTail).toContain("user.left");
    const seen = await py("import os\nprint('seen', sorted(os.listxattr('/work') + os.listxattr('/tmp')))\nopen('/work/f', 'w').close()\nprint(oct(os.stat('/work/f').st_mode & 0o777))", victim);
    expect(seen.status).toBe("SUCCEEDED");
    expect(seen.outputTail).toContain("seen []");
    expect(seen.outputTail).toContain("0o644"); // the umask's, not a leftover default ACL's
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

  it("a run's loopback connections and traffic are not the next user's to see (a network namespace per run)", async () => {
    // The victim talks to itself over loopback; its server's side closes first, so the kernel
    // keeps that connection (TIME_WAIT, port 47123) for 60 s after the run. In the slot's one
    // network namespace the next user saw it in /proc/net/tcp, and the victim's byte count in
    // the loopback counters of /proc/net/dev.
    const v = await py(
      [
        "import socket",
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', 47123)); s.listen(1)",
        "c = socket.create_connection(('127.0.0.1', 47123)); a, _ = s.accept()",
        "a.sendall(b'v' * 1000000); n = 0",
        "while n < 1000000: n += len(c.recv(65536))",
        "a.close(); c.close(); s.close()",
        "print('victim-talked', n)",
      ].join("\n"),
      victim,
    );
    expect(v.status).toBe("SUCCEEDED");
    expect(v.outputTail).toContain("victim-talked 1000000"); // its loopback works (up in its own namespace)
    const m = await py(
      [
        "def rows(f):",
        "    try: return open(f).read().splitlines()[1:]",
        "    except OSError: return []",
        "print('lo-bytes', open('/proc/net/dev').read().split('lo:')[1].split()[0])",
        "ports = [int(r.split()[1].split(':')[1], 16) for f in ('/proc/net/tcp', '/proc/net/tcp6') for r in rows(f)]",
        "print('ports', ' '.join(map(str, ports)) or '-')",
      ].join("\n"),
    );
    expect(m.status).toBe("SUCCEEDED");
    expect(m.outputTail).not.toContain("47123");
    expect(m.outputTail).toContain("ports -");
    expect(m.outputTail).toContain("lo-bytes 0");
  });

  it("a slot sandbox that dies (killed from the host) is made again for the next run", async () => {
    // This app's launcher is a child of this process (the app runs in it); its children are the slots' sandboxes.
    const launchers = childrenOf(process.pid).filter((pid) => cmdline(pid).includes("kairos-launcher\0serve"));
    expect(launchers.length).toBe(1);
    const sandboxes = childrenOf(launchers[0]!);
    expect(sandboxes.length).toBe(1);
    for (const pid of sandboxes) process.kill(pid, "SIGKILL");
    const r = await sh("echo after-restart", victim);
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("after-restart");
  });

  it("a launcher that dies (killed from the host) is started again, and so are the slots' sandboxes", async () => {
    const launchers = childrenOf(process.pid).filter((pid) => cmdline(pid).includes("kairos-launcher\0serve"));
    expect(launchers.length).toBe(1);
    process.kill(launchers[0]!, "SIGKILL");
    // Its sandboxes die with it (parent-death signal): nothing of the old one is left under a new launcher.
    await new Promise((r) => setTimeout(r, 300));
    const r = await sh("echo after-launcher-restart", victim);
    expect(r.status).toBe("SUCCEEDED");
    expect(r.outputTail).toContain("after-launcher-restart");
    const now = childrenOf(process.pid).filter((pid) => cmdline(pid).includes("kairos-launcher\0serve"));
    expect(now.length).toBe(1);
    expect(now[0]).not.toBe(launchers[0]);
    expect(childrenOf(now[0]!).length).toBe(1); // one sandbox, for the one slot
  });
});

/**
 * The launcher's requests (launcher.c), sent to it directly: the executor is their only writer, but
 * a request it gets wrong must fail that request, never take the launcher (and with it every run
 * and sandbox of the node) down or hang its loop. A stand-in for bubblewrap (sleep, as nobody)
 * keeps the slot "up"; a start request for an undefined slot is the probe that the loop still answers.
 */
type LauncherEvent = { type: string; id: number; data: string };
function launcherSession() {
  const child = spawn(launcherBinary()!, ["serve"], { stdio: ["pipe", "pipe", "ignore"] });
  const events: LauncherEvent[] = [];
  let exit: string | null = null;
  child.on("exit", (code, signal) => (exit = signal ?? `code ${code}`));
  let pending = Buffer.alloc(0);
  child.stdout!.on("data", (d: Buffer) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32LE(0)) {
      const n = pending.readUInt32LE(0);
      events.push({ type: String.fromCharCode(pending[4]!), id: pending.readUInt32LE(5), data: pending.subarray(9, 4 + n).toString("utf8") });
      pending = pending.subarray(4 + n);
    }
  });
  child.stdin!.on("error", () => undefined);
  const send = (...fields: (string | number)[]) => {
    const body = Buffer.from(fields.map((f) => `${f}\0`).join(""));
    const head = Buffer.alloc(4);
    head.writeUInt32LE(body.length);
    child.stdin!.write(Buffer.concat([head, body]));
  };
  /** The end the launcher reports for run `id`, or null if none comes within `ms` (or it exited). */
  const ended = async (id: number, ms = 3_000): Promise<string | null> => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
      const e = events.find((x) => x.type === "D" && x.id === id);
      if (e) return e.data;
      if (exit) return null;
    }
    return null;
  };
  return {
    send,
    ended,
    defineStandIn: (slot: number) => send("S", slot, 65534, "/bin/sleep", "1000"),
    /** A start request for a slot never defined: answered at once while the loop runs. */
    probe: (id: number) => {
      send("R", id, 4095, 0, 0, 0, 0, 0, 64, 0, 1, "true", 0);
      return ended(id);
    },
    get exit() {
      return exit;
    },
    close: () => {
      child.stdin!.end();
      child.kill("SIGKILL");
    },
  };
}

describe.runIf(process.platform === "linux" && process.getuid?.() === 0 && launcherBinary() !== null)("the launcher: a malformed or repeated request is refused, never a crash or a hang", () => {
  it("a start request whose count of cgroup files is past its fields is refused (4 + count + 7 overflowed: a read past them, SIGSEGV)", async () => {
    const l = launcherSession();
    try {
      l.defineStandIn(0);
      l.send("R", 1, 0, 2147483640, "a", "b", "c", "d", "e", "f", "g");
      expect(await l.ended(1)).toMatch(/malformed/);
      expect(await l.probe(2)).toMatch(/malformed/);
      expect(l.exit).toBeNull();
    } finally {
      l.close();
    }
  });

  it("a slot defined again leaves the launcher answering (the old sandbox's stderr stayed in its loop and was read from the new one's: blocked for good)", async () => {
    const l = launcherSession();
    try {
      l.defineStandIn(0);
      await new Promise((r) => setTimeout(r, 200));
      l.defineStandIn(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(await l.probe(3)).toMatch(/malformed/);
      expect(l.exit).toBeNull();
    } finally {
      l.close();
    }
  });

  it("a start request for a run id still in use is refused (the two runs' events were taken for one another's)", async () => {
    const l = launcherSession();
    try {
      l.defineStandIn(0);
      // The stand-in never takes a run: run 7 stays in the launcher's list.
      l.send("R", 7, 0, 0, 0, 0, 0, 0, 64, 0, 1, "true", 0);
      l.send("R", 7, 0, 0, 0, 0, 0, 0, 64, 0, 1, "true", 0);
      expect(await l.ended(7)).toMatch(/in use/);
      expect(await l.probe(8)).toMatch(/malformed/);
    } finally {
      l.close();
    }
  });
});

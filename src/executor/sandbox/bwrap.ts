/**
 * The command line that starts one attempt inside bubblewrap, and the root-side wrapper that puts
 * it in its cgroup, sets its rlimits and drops to its unprivileged user before bubblewrap runs.
 *
 * Inside: new user, PID, mount, IPC, UTS, cgroup and network namespaces; uid/gid 1000 ("kairos");
 * no capabilities; a new session (no terminal to inject input into); it dies with the executor
 * (--die-with-parent; its PID namespace takes every descendant along, setsid and double forks
 * included); no user namespaces of its own (--disable-userns, where bubblewrap has it). The
 * filesystem is /usr (and the /bin, /lib, /sbin links or directories) read-only, a few files of /etc, a fresh /proc showing only the run's own processes, a minimal /dev, and two
 * writable directories of its own: /work (the working directory, also HOME) and /tmp, and /kairos,
 * read-only: the files Kairos gives the run (a DAG task's inputs and params).
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";

/** The user a run is inside its sandbox (outside it is the slot's own unprivileged uid). */
export const SANDBOX_UID = 1000;
export const SANDBOX_HOME = "/work";
/** Where a run finds the files Kairos gives it (read-only): a DAG task's inputs and params. */
export const SANDBOX_GIVEN = "/kairos";
export const SANDBOX_TMP = "/tmp";
/** PATH inside the sandbox, and for unsandboxed runs: fixed, never the server's. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Files of /etc a program commonly needs and that hold no secrets. */
const ETC_FILES = [
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/ssl/certs",
  "/etc/ca-certificates",
  "/etc/mime.types",
];

/** Top-level system entries: bound read-only when they are directories, recreated when they are links (merged /usr). */
const SYSTEM_ROOTS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

export interface BwrapPlan {
  /** The slot's writable directories on the host. */
  workDir: string;
  tmpDir: string;
  /** The slot's directory of files Kairos gives the run (a DAG task's inputs and params), bound read-only at SANDBOX_GIVEN. */
  givenDir: string;
  /** Generated /etc/passwd and /etc/group naming the sandbox user. */
  passwdFile: string;
  groupFile: string;
  /** Extra host paths bound read-only (KAIROS_SANDBOX_RO_PATHS). */
  roPaths: readonly string[];
  /** Host paths bound writable (KAIROS_SANDBOX_RW_PATHS). */
  rwPaths: readonly string[];
  env: Record<string, string>;
  /** The program and its arguments. */
  argv: readonly string[];
  /** EGRESS: keep the network namespace the wrapper joined (the slot's), and give it DNS settings. */
  egress: boolean;
  /**
   * No user namespaces inside the sandbox (`--disable-userns`, bubblewrap 0.8+): a run cannot
   * `unshare -r` or nest bubblewrap to get a full set of capabilities in a namespace of its own
   * (and the kernel attack surface that comes with them).
   */
  disableUserns?: boolean;
}

let systemBinds: string[] | null = null;
/** The /usr and top-level binds for this host (read once: merged-/usr links or real directories). */
function systemArgs(): string[] {
  if (systemBinds) return systemBinds;
  const out = ["--ro-bind", "/usr", "/usr"];
  for (const p of SYSTEM_ROOTS) {
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.push("--symlink", readlinkSync(p), p);
      else if (st.isDirectory()) out.push("--ro-bind", p, p);
    } catch {
      // not on this host
    }
  }
  for (const f of ETC_FILES) if (existsSync(f)) out.push("--ro-bind", f, f);
  systemBinds = out;
  return out;
}

/**
 * Who a sandbox's processes are: uid/gid SANDBOX_UID, no capabilities, no user namespaces of their
 * own (where bubblewrap can forbid them), a session of their own, dying with their parent.
 */
function identityArgs(disableUserns?: boolean): string[] {
  return [
    ...(disableUserns ? ["--disable-userns"] : []),
    "--uid", String(SANDBOX_UID),
    "--gid", String(SANDBOX_UID),
    "--hostname", "kairos-run",
    "--die-with-parent",
    "--new-session",
    "--cap-drop", "ALL",
  ];
}

/** The generated /etc/passwd and /etc/group naming the sandbox user. */
function userFileArgs(plan: { passwdFile: string; groupFile: string }): string[] {
  return ["--ro-bind", plan.passwdFile, "/etc/passwd", "--ro-bind", plan.groupFile, "/etc/group"];
}

export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(plan.egress ? [] : ["--unshare-net"]),
    ...identityArgs(plan.disableUserns),
    ...systemArgs(),
    ...userFileArgs(plan),
  ];
  if (plan.egress) for (const f of ["/etc/resolv.conf", "/etc/hosts"]) args.push("--ro-bind-try", f, f);
  args.push("--proc", "/proc", "--dev", "/dev", "--bind", plan.workDir, SANDBOX_HOME, "--bind", plan.tmpDir, SANDBOX_TMP, "--ro-bind", plan.givenDir, SANDBOX_GIVEN);
  // After /work and /tmp, so a configured path below either is not hidden by them.
  for (const p of plan.roPaths) args.push("--ro-bind-try", p, p);
  for (const p of plan.rwPaths) args.push("--bind-try", p, p);
  args.push("--chdir", SANDBOX_HOME);
  args.push("--clearenv");
  for (const [k, v] of Object.entries(plan.env)) args.push("--setenv", k, v);
  args.push("--", ...plan.argv);
  return args;
}

/** Where a slot's sandbox finds its slot directory and the launcher binary (hidden from each run). */
export const SLOT_MOUNT = "/.kairos/slot";
export const ZYGOTE_MOUNT = "/.kairos/zygote";

export interface SlotSandboxPlan {
  /** The slot's directory: its work, tmp and given directories, bound at /work, /tmp and /kairos for each run. */
  slotRoot: string;
  /** The launcher binary (run inside as the zygote). */
  launcher: string;
  passwdFile: string;
  groupFile: string;
  roPaths: readonly string[];
  rwPaths: readonly string[];
  disableUserns?: boolean;
}

/**
 * The command line of a slot's long-lived sandbox (launcher.c): the same namespaces, system view
 * and /etc as a run's own bubblewrap (bwrapArgs), with the root and /dev read-only (they outlive
 * each run), and the zygote as its program. The zygote keeps CAP_SYS_ADMIN, CAP_SETPCAP and
 * CAP_NET_ADMIN inside the sandbox's user namespace to make each run's PID, mount, IPC, cgroup and
 * network namespaces (the slot's network namespace would keep a run's TIME_WAIT sockets and
 * loopback counters for the next); each run drops every capability before its program starts.
 */
export function slotSandboxArgs(plan: SlotSandboxPlan): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    ...identityArgs(plan.disableUserns),
    "--cap-add", "CAP_SYS_ADMIN",
    "--cap-add", "CAP_SETPCAP",
    // Each run's own network namespace starts with its loopback down (launcher.c brings it up).
    "--cap-add", "CAP_NET_ADMIN",
    ...systemArgs(),
    ...userFileArgs(plan),
    "--proc", "/proc",
    "--dev", "/dev",
    "--dir", SANDBOX_HOME,
    "--dir", SANDBOX_TMP,
    "--dir", SANDBOX_GIVEN,
    "--bind", plan.slotRoot, SLOT_MOUNT,
    "--ro-bind", plan.launcher, ZYGOTE_MOUNT,
  ];
  for (const p of plan.roPaths) args.push("--ro-bind-try", p, p);
  for (const p of plan.rwPaths) args.push("--bind-try", p, p);
  args.push("--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--clearenv", "--", ZYGOTE_MOUNT, "zygote");
  return args;
}

export const PASSWD = `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nkairos:x:${SANDBOX_UID}:${SANDBOX_UID}:Kairos run:${SANDBOX_HOME}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const GROUP = `root:x:0:\nkairos:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`;

/**
 * The wrapper the executor spawns (as itself, usually root): joins the attempt's cgroups, sets the
 * rlimits, drops to the slot's uid with no capabilities and no way to gain any, and execs the
 * rest of its arguments (bubblewrap). Positional: cgroup.procs files (colon separated, may be
 * empty), open files, file size in 512-byte blocks, processes (`-`: unset), uid and gid (`-`: stay),
 * and a network namespace to join first (`-`: none; bubblewrap then makes one with only loopback).
 * Exit 125: the wrapper could not set the attempt up.
 */
export const WRAPPER =
  'p=$1 n=$2 f=$3 u=$4 uid=$5 gid=$6 net=$7; shift 7; ' +
  'if [ -n "$p" ]; then IFS=:; for c in $p; do echo $$ > "$c" || exit 125; done; unset IFS; fi; ' +
  'ulimit -n "$n" && ulimit -f "$f" || exit 125; ' +
  'if [ "$u" != - ]; then ulimit -p "$u" || exit 125; fi; ' +
  'if [ "$uid" = - ]; then exec "$@"; fi; ' +
  'if [ "$net" != - ]; then set -- nsenter --net="$net" -- setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"; exec "$@"; fi; ' +
  'exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"';

export interface WrapperPlan {
  procsFiles: readonly string[];
  nofile: number;
  fileSizeBytes: number;
  /** RLIMIT_NPROC (per uid): used only where no cgroup limits processes. */
  nproc: number | null;
  /** The slot's uid/gid, or null to stay the executor's user. */
  uid: number | null;
  /** A network namespace to join before dropping privileges (EGRESS), or null. */
  netns: string | null;
  argv: readonly string[];
}

export function wrapperArgs(w: WrapperPlan): [string, string[]] {
  return [
    "/bin/sh",
    [
      "-c",
      WRAPPER,
      "kairos-sandbox",
      w.procsFiles.join(":"),
      String(w.nofile),
      String(Math.max(1, Math.floor(w.fileSizeBytes / 512))),
      w.nproc === null ? "-" : String(w.nproc),
      w.uid === null ? "-" : String(w.uid),
      w.uid === null ? "-" : String(w.uid),
      w.netns ?? "-",
      ...w.argv,
    ],
  ];
}

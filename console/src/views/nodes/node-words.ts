/** Node facts in words: status tones, sizes, and how a node isolates runs. */
import type { ConsoleNodeFieldsFragment } from "../../../../generated/client/graphql";

export type NodeIsolation = NonNullable<ConsoleNodeFieldsFragment["isolation"]>;

const STATUS_TONE: Record<string, string> = { ONLINE: "ok", DRAINING: "warn", OFFLINE: "muted", DEAD: "bad" };
const STATUS_WORD: Record<string, string> = { ONLINE: "healthy", DRAINING: "draining", OFFLINE: "offline", DEAD: "dead" };

export function statusTone(status: string): string {
  return STATUS_TONE[status] ?? "muted";
}

export function statusWord(status: string): string {
  return STATUS_WORD[status] ?? status.toLowerCase();
}

/** MiB as people read them: 512 MiB, 1.5 GiB. */
export function mib(n: number): string {
  if (Math.abs(n) < 1024) return `${Math.round(n)} MiB`;
  const g = n / 1024;
  return `${g >= 100 ? Math.round(g) : Math.round(g * 10) / 10} GiB`;
}

/** CPU cores: 1 core, 0.5 cores, 2.25 cores. */
export function cores(n: number): string {
  const r = Math.round(n * 100) / 100;
  return `${r} ${r === 1 ? "core" : "cores"}`;
}

const NAMESPACE: Record<string, string> = { user: "user", pid: "PID", mount: "mount", ipc: "IPC", uts: "host name", net: "network", cgroup: "cgroup" };
const CGROUP: Record<string, string> = { memory: "memory limit", cpu: "CPU quota", pids: "process limit", io: "I/O limit" };
const RLIMIT: Record<string, string> = { as: "address-space limit", nproc: "process limit", nofile: "open-files limit", fsize: "file-size limit" };
const PLAIN: Record<string, string> = {
  "no-capabilities": "no Linux capabilities",
  "read-only-system": "read-only system files",
  "private-work-dir": "a private working directory",
  "private-tmp": "a private /tmp",
  "no-nested-user-namespaces": "no nested user namespaces",
  "unprivileged-uid-per-slot": "an unprivileged user id per slot",
  "process-group": "its own process group (killed as a whole)",
  "disk-cap": "a cap on disk use (working directory and /tmp)",
  "lease-deadline-supervisor": "stopped when its lease or deadline ends",
  "fixed-path-and-env": "a fixed PATH and environment",
  "sandbox-kept-per-slot": "a sandbox kept per slot (fast starts), made afresh between runs",
  "read-only-root-and-dev": "a read-only root and /dev",
  "seccomp:no-keyring": "no kernel keyring (seccomp)",
};

/** One enforced guarantee in words (the API's token when it is not known here). */
export function enforcedWords(token: string): string {
  if (PLAIN[token]) return PLAIN[token];
  const [kind, rest = ""] = token.split(":", 2);
  if (kind === "namespaces") return `its own ${list(rest.split(",").map((n) => NAMESPACE[n] ?? n))} namespaces`;
  if (kind === "namespaces-per-run") return `fresh ${list(rest.split(",").map((n) => NAMESPACE[n] ?? n))} namespaces for each run`;
  if (kind === "seccomp") return `seccomp: ${rest.replace(/-/g, " ")}`;
  if (kind.startsWith("cgroup-v")) return `cgroup v${kind.slice(8)} ${CGROUP[rest] ?? `${rest} limit`}`;
  if (kind === "rlimit") return `an ${RLIMIT[rest] ?? `${rest} limit`} (rlimit)`.replace(/^an ([^aeiou])/, "a $1");
  if (kind === "egress") return "outbound network through its own network namespace; the node and denied address ranges unreachable";
  return token;
}

function list(items: string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** An interpreter's version as people say it: "GNU bash, version 5.2.15(1)-release (…)" → "5.2.15". */
export function shortVersion(version: string | null | undefined): string {
  if (!version) return "";
  return /\d+(?:\.\d+)+/.exec(version)?.[0] ?? version.slice(0, 24);
}

/** The one-sentence summary of how a node isolates runs. */
export function isolationSummary(iso: NodeIsolation | null | undefined): string {
  if (!iso) return "Not reported (a node of an older version).";
  if (iso.mode === "BUBBLEWRAP") return "Each run is sandboxed with bubblewrap.";
  if (iso.mode === "NONE") return "Not sandboxed: runs are ordinary processes of the node's user, with its network and files.";
  return `Mode ${iso.mode}.`;
}

export function networkWords(network: readonly string[]): string {
  const egress = network.includes("EGRESS");
  const none = network.includes("NONE");
  if (egress && none) return "No network by default; outbound (egress) access for jobs that ask for it.";
  if (egress) return "Outbound (egress) network access only.";
  if (none) return "No network access (egress is not offered here).";
  return "No network modes reported.";
}

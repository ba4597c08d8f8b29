/** What a node's sandbox enforces, as `nodes { isolation }` shows it. */
import type { NodeIsolation } from "../../domain/index.js";
import type { Cgroups } from "./cgroups.js";

/** How this node runs a user's program: in a bubblewrap sandbox, or as a plain process. */
export type SandboxMode = "bubblewrap" | "none";

const isRoot = () => process.getuid?.() === 0;

/** What the launcher adds (launcher.c): one bubblewrap per slot, fresh namespaces and no keyring per run. */
export const KEPT_SANDBOX = ["sandbox-kept-per-slot", "namespaces-per-run:pid,mount,ipc,net,cgroup", "seccomp:no-keyring", "read-only-root-and-dev"];

export function describeIsolation(mode: SandboxMode, cgroups: Cgroups | null, notes: string[], disableUserns: boolean, egress: boolean): NodeIsolation {
  const enforced: string[] = [];
  if (mode === "bubblewrap") {
    enforced.push("namespaces:user,pid,mount,ipc,uts,net,cgroup", "no-capabilities", "read-only-system", "private-work-dir", "private-tmp");
    if (disableUserns) enforced.push("no-nested-user-namespaces");
    if (isRoot()) enforced.push("unprivileged-uid-per-slot");
    else notes.push("the executor is not root: runs keep its uid outside their namespaces");
  } else {
    enforced.push("process-group");
  }
  if (cgroups) enforced.push(...cgroups.enforces.map((c) => `cgroup-v${cgroups.version}:${c}`));
  else enforced.push("rlimit:as", ...(mode === "bubblewrap" && isRoot() ? ["rlimit:nproc"] : []));
  enforced.push("rlimit:nofile", "rlimit:fsize", "disk-cap", "lease-deadline-supervisor", "fixed-path-and-env");
  if (mode === "none") notes.push("no sandbox: runs use this node's network and filesystem as its user");
  if (egress) enforced.push("egress:own-netns,host-unreachable,denied-ranges");
  return { mode: mode === "bubblewrap" ? "BUBBLEWRAP" : "NONE", enforced, network: egress ? ["NONE", "EGRESS"] : ["NONE"], notes };
}

/**
 * The executor role's settings: its pools, its sandbox, the resources its runs get and may ask
 * for, and the egress network it offers.
 *
 * The parser of resource settings (`cpu=2,memoryMb=4096`) stays in core/resources.ts with the
 * resource keys and bounds it checks against, written once there; the default egress deny list is
 * imported from executor/sandbox/egress.ts, where it is declared (see the note in load.ts).
 */
import { cpus } from "node:os";
import { DEFAULT_RESOURCES, RESOURCE_KEYS, parseResourceSetting } from "../core/index.js";
import { ConfigError } from "../domain/index.js";
import { DEFAULT_EGRESS_DENY } from "../executor/index.js";
import { int, type Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

/** `KAIROS_POOLS`: names of the pools this executor pulls from. */
export function poolsSetting(env: Env): string[] {
  const pools = (env.KAIROS_POOLS ?? "default").split(",").map((p) => p.trim()).filter(Boolean);
  for (const p of pools) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(p)) {
      throw new ConfigError(`KAIROS_POOLS: pool name "${p}" may use only letters, digits, '_', '.', '-' (1–64 characters)`);
    }
  }
  if (pools.length === 0) throw new ConfigError("KAIROS_POOLS: name at least one pool");
  return pools;
}

function egressSettings(env: Env): KairosConfig["egress"] {
  const subnet = env.KAIROS_EGRESS_SUBNET?.trim();
  if (!subnet) {
    if (env.KAIROS_EGRESS_DENY) throw new ConfigError("KAIROS_EGRESS_DENY: set KAIROS_EGRESS_SUBNET too (EGRESS is offered only with a subnet)");
    return null;
  }
  if (!/^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.test(subnet)) throw new ConfigError(`KAIROS_EGRESS_SUBNET: "${subnet}" is not an IPv4 /16 like 10.231.0.0/16`);
  const deny = env.KAIROS_EGRESS_DENY === undefined ? [...DEFAULT_EGRESS_DENY] : env.KAIROS_EGRESS_DENY.split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of deny) {
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(c)) throw new ConfigError(`KAIROS_EGRESS_DENY: "${c}" is not an IPv4 CIDR like 10.0.0.0/8`);
  }
  return { subnet, deny };
}

type SandboxSettings = Pick<
  KairosConfig,
  "sandbox" | "sandboxLauncher" | "sandboxUidBase" | "sandboxRoPaths" | "sandboxRwPaths" | "executorCapacity" | "runDefaults" | "runMax" | "egress"
>;

/** How runs are isolated, what they get and may ask for, and the egress network offered to them. */
export function sandboxSettings(dev: boolean, env: Env): SandboxSettings {
  const raw = env.KAIROS_SANDBOX?.trim();
  if (raw !== undefined && raw !== "" && raw !== "bubblewrap" && raw !== "none") {
    throw new ConfigError(`KAIROS_SANDBOX: "${raw}" is not one of bubblewrap, none`);
  }
  const sandbox = raw === "bubblewrap" || raw === "none" ? raw : dev ? "auto" : "bubblewrap";
  const paths = (name: string) => {
    const list = (env[name] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    for (const p of list) if (!p.startsWith("/")) throw new ConfigError(`${name}: "${p}" is not an absolute path`);
    return list;
  };
  const roPaths = paths("KAIROS_SANDBOX_RO_PATHS");
  const capacity = env.KAIROS_EXECUTOR_CAPACITY
    ? parseResourceSetting("KAIROS_EXECUTOR_CAPACITY", env.KAIROS_EXECUTOR_CAPACITY, { ...DEFAULT_RESOURCES, cpu: cpus().length * 2, memoryMb: 1 << 20 })
    : null;
  const runDefaults = parseResourceSetting("KAIROS_RUN_DEFAULTS", env.KAIROS_RUN_DEFAULTS, DEFAULT_RESOURCES);
  const runMax = env.KAIROS_RUN_MAX ? parseResourceSetting("KAIROS_RUN_MAX", env.KAIROS_RUN_MAX, { cpu: cpus().length, memoryMb: 1 << 20, pids: 4096, diskMb: 10_240 }) : null;
  if (runMax) {
    for (const k of RESOURCE_KEYS) {
      if (runDefaults[k] > runMax[k]) throw new ConfigError(`KAIROS_RUN_DEFAULTS: ${k} ${runDefaults[k]} is above KAIROS_RUN_MAX's ${runMax[k]}`);
    }
  }
  const launcher = env.KAIROS_SANDBOX_LAUNCHER?.trim() || "on";
  if (launcher !== "on" && launcher !== "off") throw new ConfigError(`KAIROS_SANDBOX_LAUNCHER: "${launcher}" is not one of on, off`);
  return {
    sandbox,
    sandboxLauncher: launcher === "on",
    sandboxUidBase: int("KAIROS_SANDBOX_UID_BASE", env.KAIROS_SANDBOX_UID_BASE, 61_000, 1_000, 4_000_000_000),
    sandboxRoPaths: roPaths,
    sandboxRwPaths: paths("KAIROS_SANDBOX_RW_PATHS"),
    executorCapacity: capacity ? { cpu: capacity.cpu, memoryMb: capacity.memoryMb } : null,
    runDefaults,
    runMax,
    egress: egressSettings(env),
  };
}

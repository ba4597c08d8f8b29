/** The executor's settings for the job kinds: which interpreters it offers, where HTTP jobs may connect. */
import { isIP } from "node:net";
import { ConfigError, SCRIPT_INTERPRETERS, isScriptInterpreter } from "../domain/index.js";
import type { Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

/**
 * Whether `c` is an address or CIDR the executor can apply. Checked here, at start: an entry
 * request-filtering-agent cannot parse it only warns about and skips (a denied range silently
 * not denied), and one the executor's own deny list cannot parse would fail every HTTP run.
 */
function isCidr(c: string): boolean {
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(c);
  if (!m) return false;
  const v = isIP(m[1]!);
  return v !== 0 && (m[2] === undefined || Number(m[2]) <= (v === 4 ? 32 : 128));
}

function cidrs(name: string, raw: string | undefined): string[] {
  const list = (raw ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of list) if (!isCidr(c)) throw new ConfigError(`${name}: "${c}" is not an address or CIDR like 10.0.0.0/8, 127.0.0.1 or fd00::/8`);
  return list;
}

export function jobKindSettings(env: Env): Pick<KairosConfig, "jobKinds"> {
  const raw = env.KAIROS_INTERPRETERS?.trim();
  let interpreters: string[] | null = null;
  if (raw) {
    interpreters = raw.split(",").map((i) => i.trim()).filter(Boolean);
    for (const i of interpreters) if (!isScriptInterpreter(i)) throw new ConfigError(`KAIROS_INTERPRETERS: "${i}" is not one of ${SCRIPT_INTERPRETERS.join(", ")}`);
  }
  return {
    jobKinds: {
      interpreters,
      httpAllowedCidrs: cidrs("KAIROS_HTTP_JOB_ALLOWED_CIDRS", env.KAIROS_HTTP_JOB_ALLOWED_CIDRS),
      httpDeniedCidrs: cidrs("KAIROS_HTTP_JOB_DENIED_CIDRS", env.KAIROS_HTTP_JOB_DENIED_CIDRS),
    },
  };
}

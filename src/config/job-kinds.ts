/** The executor's settings for the job kinds: which interpreters it offers, where HTTP jobs may connect. */
import { ConfigError, SCRIPT_INTERPRETERS, isScriptInterpreter } from "../domain/index.js";
import type { Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

const CIDR_RE = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]+)(\/\d{1,3})?$/;

function cidrs(name: string, raw: string | undefined): string[] {
  const list = (raw ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of list) if (!CIDR_RE.test(c)) throw new ConfigError(`${name}: "${c}" is not an address or CIDR like 10.0.0.0/8, 127.0.0.1 or fd00::/8`);
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

/** The executor's settings for the job kinds: which interpreters it offers, where HTTP jobs may connect. */
import { ConfigError, SCRIPT_INTERPRETERS, isScriptInterpreter } from "../domain/index.js";
import { cidrs } from "./cidrs.js";
import type { Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

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

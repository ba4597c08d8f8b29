/** Address and CIDR list settings (HTTP jobs' and alert webhooks' allowed and denied ranges). */
import { isIP } from "node:net";
import { ConfigError } from "../domain/index.js";

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

/** A comma-separated list of addresses and CIDRs, each checked; the setting `name` is named in the error. */
export function cidrs(name: string, raw: string | undefined): string[] {
  const list = (raw ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of list) if (!isCidr(c)) throw new ConfigError(`${name}: "${c}" is not an address or CIDR like 10.0.0.0/8, 127.0.0.1 or fd00::/8`);
  return list;
}

/**
 * The audit trail's treatment of fields that carry a user's payload rather than a named setting
 * (docs/audit.md, "Secrets are never stored"): an HTTP request's or response's headers (every
 * value redacted but those of a short list of harmless headers) and body (its size and SHA-256),
 * the URL of an HTTP job or an alert webhook (its origin and a SHA-256 of the rest), DAG params
 * (size and SHA-256), and environment values (a SHA-256 each). A change stays visible in before
 * and after as a different digest; the text is not stored.
 */
import { createHash } from "node:crypto";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/** Headers whose values say how to talk, never who is talking: stored as given. */
export const HARMLESS_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "accept-charset",
  "accept-encoding",
  "accept-language",
  "cache-control",
  "content-encoding",
  "content-language",
  "content-type",
  "pragma",
  "user-agent",
]);

/** Header name → value with every value but a harmless header's replaced by `redacted`. */
export function redactHeaders(headers: Record<string, unknown>, redacted: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(headers).sort()) {
    const v = headers[name];
    if (v === undefined) continue;
    out[name] = HARMLESS_HEADERS.has(name.toLowerCase()) && (typeof v === "string" || typeof v === "number") ? v : redacted;
  }
  return out;
}

/** A payload's stand-in: its length in characters and the SHA-256 (hex) of its text. */
export function payloadDigest(text: string): { chars: number; sha256: string } {
  return { chars: text.length, sha256: sha256(text) };
}

/** An environment value's stand-in: `sha256:<hex>` of the value. */
export function valueDigest(text: string): string {
  return `sha256:${sha256(text)}`;
}

/**
 * A URL whose path or query may be the secret (a Slack incoming webhook's path, a signed URL's
 * query): its origin, then the SHA-256 of everything after it (path, query, fragment), e.g.
 * `https://hooks.slack.com/… sha256:3f…`. User and password are dropped with the rest. Text that
 * is not an absolute URL is digested whole.
 */
export function urlDigest(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return valueDigest(text);
  }
  const origin = url.origin !== "null" ? url.origin : `${url.protocol}//${url.host}`;
  return `${origin}/… ${valueDigest(url.pathname + url.search + url.hash)}`;
}

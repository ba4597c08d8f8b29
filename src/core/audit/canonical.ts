/**
 * The audit trail's encodings: a value turned into plain JSON with sorted keys and every secret
 * field redacted (`auditJson`), capped in size (`capped`), reduced to what changed between two
 * versions (`changedParts`), and an entry's canonical encoding (`auditEntryText`) and unkeyed hash (`auditHash`).
 */
import { createHash } from "node:crypto";
import type { AuditEntryDoc } from "../../domain/index.js";
import { payloadDigest, redactHeaders, urlDigest, valueDigest } from "./payloads.js";

export const REDACTED = "[redacted]";

/**
 * Fields whose values are never stored, at any depth, whatever object they are in: passwords,
 * API keys and their hashes, signing secrets, tokens, credentials, private keys (an environment
 * variable named like one, e.g. DB_PASSWORD or GITHUB_TOKEN, included). A field so named that
 * holds an object (`apiKey: {id, prefix}`) is not dropped whole: its own fields are judged.
 */
const SECRET_FIELD = /pass(word|wd|phrase)|secret|token|credential|private[_-]?key|api[_-]?key|^key$|^hash$|authorization|cookie|signature/i;

/** Names that only point at or describe a secret (`apiKeyId`, `tokenVersion`, `expiresAt`). */
const NOT_A_SECRET = /(Id|Ids|Prefix|At|Version|Count|Scope|Name)$/;

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name) && !NOT_A_SECRET.test(name);
}

/**
 * Query parameters whose values are credentials: any named like a secret field, and the usual
 * names of keys, signatures and sessions (`access_key`, `X-Amz-Credential`, `X-Amz-Signature`,
 * `sig`, `key`, `apikey`, `auth`, `session`, `code`, …). Broad on purpose: a parameter kept
 * wrongly leaks, one redacted wrongly only hides a harmless value.
 */
const SECRET_PARAM = /key|sig|auth|session|token|secret|pass|pwd|cred|^code$|^x-amz-|^x-goog-/i;

export function isSecretParam(name: string): boolean {
  return isSecretField(name) || SECRET_PARAM.test(name);
}

/**
 * A URL's credentials are secrets whatever field holds it: its password (`https://u:pw@host`,
 * `postgres://u:pw@db`, any scheme) and the values of query parameters named like credentials
 * (`?token=…`, `&access_key=…`, `&X-Amz-Signature=…`; `isSecretParam`), of any scheme.
 */
export function redactUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  // Any scheme's userinfo password (postgres://app:pw@db/app, amqp://u:pw@mq): kept to the user name.
  const withUser = /^([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*):([^\s@/?#]*)@/i;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return withUser.test(text) ? text.replace(withUser, "$1:redacted@") : text;
  }
  if (!/^https?:$/i.test(url.protocol)) {
    // Other schemes keep their own spelling (URL would re-encode them): the password by pattern, the query by hand.
    let out = withUser.test(text) ? text.replace(withUser, "$1:redacted@") : text;
    const q = out.indexOf("?");
    if (q >= 0) {
      const [query, fragment = null] = out.slice(q + 1).split(/#(.*)/s, 2);
      const parts = query!.split("&").map((part) => {
        const eq = part.indexOf("=");
        if (eq < 0) return part;
        let name = part.slice(0, eq);
        try {
          name = decodeURIComponent(name.replace(/\+/g, " "));
        } catch {
          // an undecodable name is judged as written
        }
        return isSecretParam(name) ? `${part.slice(0, eq)}=redacted` : part;
      });
      out = `${out.slice(0, q)}?${parts.join("&")}${fragment === null ? "" : `#${fragment}`}`;
    }
    return out;
  }
  let changed = false;
  if (url.password) {
    url.password = "redacted";
    changed = true;
  }
  for (const name of [...new Set(url.searchParams.keys())]) {
    if (isSecretParam(name)) {
      url.searchParams.set(name, "redacted");
      changed = true;
    }
  }
  return changed ? url.toString() : text;
}

const MAX_DEPTH = 24;

const isPlainObject = (v: unknown): boolean => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date);

/** Plain JSON of `value` (Dates as ISO strings, keys sorted, functions and undefined left out), secrets redacted. */
export function auditJson(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  switch (typeof value) {
    case "string":
      return redactUrl(value);
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return null;
  }
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((v) => auditJson(v, depth + 1));
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function") return auditJson(toJSON.call(value), depth + 1);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value as object).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    out[key] = isSecretField(key) && v !== null && !isPlainObject(v) ? REDACTED : payloadField(key, v, depth + 1);
  }
  return out;
}

/**
 * A field that carries a user's payload, by its name and shape (./payloads.ts): an HTTP request
 * (`http`: url, headers, body) or response (`httpResponse`), an alert rule's `webhook`, DAG
 * `params` (`paramsJson` in a stored document), a spec's `env`. Anything else is encoded as usual.
 */
function payloadField(key: string, v: unknown, depth: number): unknown {
  // A stored DAG or DAG run document (a mapper's `doc`) holds its params as JSON text.
  if (key === "paramsJson" && typeof v === "string") return payloadDigest(v);
  const plain = auditJson(v, depth);
  if (!isPlainObject(plain)) return key === "params" && Array.isArray(plain) ? payloadDigest(JSON.stringify(plain)) : plain;
  const o = plain as Record<string, unknown>;
  // Digests are of the text as given (a change in a redacted part still shows); `o` is the encoded copy.
  const raw = isPlainObject(v) ? (v as Record<string, unknown>) : o;
  switch (key) {
    case "http":
    case "httpResponse": {
      const out = { ...o };
      if (typeof out.url === "string") out.url = urlDigest(typeof raw.url === "string" ? raw.url : out.url);
      if (isPlainObject(out.headers)) out.headers = redactHeaders(out.headers as Record<string, unknown>, REDACTED);
      if (typeof out.body === "string") out.body = payloadDigest(typeof raw.body === "string" ? raw.body : out.body);
      return out;
    }
    case "webhook":
      return typeof o.url === "string" ? { ...o, url: urlDigest(typeof raw.url === "string" ? raw.url : o.url) } : o;
    case "params":
      return payloadDigest(JSON.stringify(o));
    case "env": {
      const out: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(o)) out[name] = value === REDACTED || typeof value !== "string" ? value : valueDigest(typeof raw[name] === "string" ? (raw[name] as string) : value);
      return out;
    }
    default:
      return o;
  }
}

/** Largest JSON text kept for one of an entry's args, before and after; past it, its size and SHA-256 stand in. */
export const MAX_DETAIL_CHARS = 16_384;

/** The JSON text of an already plain value, or a stand-in naming its size and SHA-256 when it is too long. */
export function capped(plain: unknown, max = MAX_DETAIL_CHARS): string {
  const text = JSON.stringify(plain);
  if (text.length <= max) return text;
  return JSON.stringify({ truncated: true, chars: text.length, sha256: createHash("sha256").update(text).digest("hex") });
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Two plain versions of a document reduced to what differs: the fields (recursively, for nested
 * objects) whose values are not equal, each side with its own value (absent: null). Arrays and
 * scalars are compared whole.
 */
export function changedParts(before: Record<string, unknown>, after: Record<string, unknown>): [Record<string, unknown>, Record<string, unknown>] {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const x = before[key] ?? null;
    const y = after[key] ?? null;
    if (isObject(x) && isObject(y)) {
      const [bx, ay] = changedParts(x, y);
      if (Object.keys(bx).length || Object.keys(ay).length) {
        b[key] = bx;
        a[key] = ay;
      }
    } else if (JSON.stringify(x) !== JSON.stringify(y)) {
      b[key] = x;
      a[key] = y;
    }
  }
  return [b, a];
}

/**
 * The canonical encoding an entry's hash is taken over: its fields in a fixed order, `hash` left
 * out; a keyed entry (v2) adds the id of the key that hashed it.
 */
export function auditEntryText(e: Omit<AuditEntryDoc, "hash">): string {
  const fields: unknown[] = [
    e.v,
    e.seq,
    e._id,
    e.at instanceof Date ? e.at.getTime() : null,
    e.action,
    e.actor?.userId ?? null,
    e.actor?.username ?? null,
    e.actor?.role ?? null,
    e.actor?.apiKeyId ?? null,
    e.address,
    e.targetIds,
    e.outcome,
    e.error,
    e.args,
    e.before,
    e.after,
    e.prevHash,
  ];
  if (e.v !== 1) fields.push(e.keyId ?? null);
  return JSON.stringify(fields);
}

/**
 * SHA-256 (hex) of the entry's canonical encoding: the unkeyed hash of the entries written before
 * the chain was keyed (v1). Anyone can compute it; keyed entries are hashed by ./keys.ts.
 */
export function auditHash(e: Omit<AuditEntryDoc, "hash">): string {
  return createHash("sha256").update(auditEntryText(e)).digest("hex");
}

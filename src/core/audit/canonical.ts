/**
 * The audit trail's encodings: a value turned into plain JSON with sorted keys and every secret
 * field redacted (`auditJson`), capped in size (`capped`), reduced to what changed between two
 * versions (`changedParts`), and the hash of an entry over a fixed field order (`auditHash`).
 */
import { createHash } from "node:crypto";
import type { AuditEntryDoc } from "../../domain/index.js";

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
 * A URL's credentials are secrets whatever field holds it: its password (`https://u:pw@host`,
 * `postgres://u:pw@db`, any scheme) and, for http(s), the values of query parameters named like
 * secrets (`?token=…`, `&api_key=…`, `&sig=…`).
 */
export function redactUrl(text: string): string {
  // Any scheme's userinfo password (postgres://app:pw@db/app, amqp://u:pw@mq): kept to the user name.
  const withUser = /^([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*):([^\s@/?#]*)@/i;
  if (!/^https?:\/\//i.test(text)) return withUser.test(text) ? text.replace(withUser, "$1:redacted@") : text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  let changed = false;
  if (url.password) {
    url.password = "redacted";
    changed = true;
  }
  for (const name of [...new Set(url.searchParams.keys())]) {
    if (isSecretField(name) || /^(sig|code|auth)$/i.test(name)) {
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
    out[key] = isSecretField(key) && v !== null && !isPlainObject(v) ? REDACTED : auditJson(v, depth + 1);
  }
  return out;
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

/** SHA-256 (hex) of the entry's canonical encoding: its fields in a fixed order, `hash` left out. */
export function auditHash(e: Omit<AuditEntryDoc, "hash">): string {
  const fields = [
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
  return createHash("sha256").update(JSON.stringify(fields)).digest("hex");
}

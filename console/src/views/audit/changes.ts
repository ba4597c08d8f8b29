/**
 * What an audit entry says a call changed, as rows of a diff: its `before` and `after` (docs/audit.md)
 * walked field by field. An update stores only the fields that differ (each side its value); a create
 * has no `before`, a delete no `after`; nested objects are walked, arrays and the trail's markers
 * (a redacted secret, a payload's digest, a value too large to keep) are compared whole.
 */

/** What the trail stores in place of a secret (src/core/audit/canonical.ts). */
export const REDACTED = "[redacted]";

export type ChangeKind = "added" | "removed" | "changed";

export interface Change {
  /** Dotted path of the field, e.g. `spec.env.DB_PASSWORD`; "" for the value as a whole. */
  path: string;
  kind: ChangeKind;
  /** The value before (undefined: the field was not there). */
  before: unknown;
  after: unknown;
}

/** At most this many rows: the trail keeps up to 16 KiB a side, but a list must stay readable. */
export const MAX_CHANGES = 400;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A payload stored as its digest (`{chars, sha256}`), or a side too large to keep (`{truncated, chars, sha256}`). */
export function digestOf(v: unknown): { chars: number; sha256: string; truncated: boolean } | null {
  if (!isObject(v) || typeof v.chars !== "number" || typeof v.sha256 !== "string") return null;
  const keys = Object.keys(v).sort().join(",");
  if (keys === "chars,sha256") return { chars: v.chars, sha256: v.sha256, truncated: false };
  if (keys === "chars,sha256,truncated" && v.truncated === true) return { chars: v.chars, sha256: v.sha256, truncated: true };
  return null;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const joinPath = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The rows of the diff between two JSON values (undefined: absent). */
export function changesOf(before: unknown, after: unknown): Change[] {
  const out: Change[] = [];
  const walk = (path: string, b: unknown, a: unknown) => {
    if (out.length >= MAX_CHANGES) return;
    const bAbsent = b === undefined || (path === "" && b === null);
    const aAbsent = a === undefined || (path === "" && a === null);
    if (bAbsent && aAbsent) return;
    const walkable = (v: unknown, absent: boolean) => absent || (isObject(v) && !digestOf(v));
    if (walkable(b, bAbsent) && walkable(a, aAbsent) && (isObject(b) || isObject(a))) {
      const bo = isObject(b) ? b : {};
      const ao = isObject(a) ? a : {};
      const keys = [...Object.keys(bo), ...Object.keys(ao).filter((k) => !(k in bo))];
      for (const k of keys) walk(joinPath(path, k), bo[k], ao[k]);
      return;
    }
    if (!bAbsent && !aAbsent && same(b, a)) return;
    out.push({ path, kind: bAbsent ? "added" : aAbsent ? "removed" : "changed", before: bAbsent ? undefined : b, after: aAbsent ? undefined : a });
  };
  walk("", before ?? undefined, after ?? undefined);
  return out;
}

/** A value as one line of text: strings as they are, the rest as JSON. */
export function valueText(v: unknown): string {
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

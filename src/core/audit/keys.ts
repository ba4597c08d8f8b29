/**
 * The audit key (docs/audit.md, "The key"): entries are hashed with HMAC-SHA-256 under a key that
 * is not in MongoDB, so whoever can write to the store but does not hold the key cannot make a
 * rewritten chain verify. The key is derived (HKDF-SHA-256, its own label) from a secret:
 * KAIROS_AUDIT_KEY, or KAIROS_JWT_SECRET when that is not set. Each key has an id, derived from
 * the same secret under another label (it reveals nothing of the key), recorded in every entry
 * and record it signs; verification takes the key by that id among the current one and those of
 * KAIROS_AUDIT_PREVIOUS_KEYS, so entries made before a rotation still verify.
 */
import { createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { AuditEntryDoc } from "../../domain/index.js";
import { auditEntryText, auditHash } from "./canonical.js";

const KEY_LABEL = "kairos audit chain v1";
const ID_LABEL = "kairos audit key id v1";

const derive = (secret: string, label: string, bytes: number): Buffer => Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), label, bytes));

export class AuditKeyring {
  /** The id of the key new entries and records are signed with. */
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  /** `secret`: the current secret; `previous`: the secrets of keys used before (verification only). */
  constructor(secret: string, previous: readonly string[] = []) {
    this.keyId = this.add(secret);
    for (const p of previous) this.add(p);
  }

  /** The ids of every key known here, the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** HMAC-SHA-256 (hex) of `text` with the key `keyId`, or null when that key is not known here. */
  macWith(keyId: string, text: string): string | null {
    const key = this.keys.get(keyId);
    return key ? createHmac("sha256", key).update(text).digest("hex") : null;
  }

  /** Signs a record of the chain (the head, the anchor, where keys began): its kind and fields, in order. */
  sign(kind: string, fields: unknown[]): { keyId: string; mac: string } {
    return { keyId: this.keyId, mac: this.macWith(this.keyId, recordText(kind, fields))! };
  }

  /** Whether `mac` is the record's signature by `keyId`: null when that key is not known here. */
  checkRecord(keyId: string, kind: string, fields: unknown[], mac: string): boolean | null {
    const expected = this.macWith(keyId, recordText(kind, fields));
    return expected === null ? null : sameHex(expected, mac);
  }

  /** The hash an entry must carry: SHA-256 for an unkeyed one (v1), the HMAC by its key for a keyed one (v2); null when its key is not known here. */
  entryHash(e: Omit<AuditEntryDoc, "hash">): string | null {
    if (e.v === 1) return auditHash(e);
    return typeof e.keyId === "string" ? this.macWith(e.keyId, auditEntryText(e)) : null;
  }

  private add(secret: string): string {
    const id = derive(secret, ID_LABEL, 8).toString("hex");
    if (!this.keys.has(id)) this.keys.set(id, derive(secret, KEY_LABEL, 32));
    return id;
  }
}

const recordText = (kind: string, fields: unknown[]): string => JSON.stringify(["auditChain", kind, ...fields]);

function sameHex(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(typeof b === "string" ? b : "").digest();
  return timingSafeEqual(x, y);
}

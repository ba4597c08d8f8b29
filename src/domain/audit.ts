/**
 * The audit trail's stored shapes (issue #31; docs/audit.md): one entry per GraphQL mutation
 * call, chained by hash in the order of `seq`, and the two bookkeeping documents of the chain.
 */

/** Who made the call: the user, and the API key when the call used one (null fields: nobody signed in). */
export interface AuditActor {
  userId: string | null;
  username: string | null;
  /** The user's role at the time of the call (ADMIN: an administrator acting, perhaps on another's objects). */
  role: string | null;
  apiKeyId: string | null;
}

/** What the hash covers, in this order (src/core/audit/canonical.ts); `hash` itself is left out. */
export interface AuditEntryDoc {
  _id: string;
  /** 1, 2, 3 …: the chain's order; unique, so two API instances can never both write the same link. */
  seq: number;
  /**
   * Version of the canonical encoding the hash was taken over: 1, SHA-256 (entries written before
   * the chain was keyed); 2, HMAC-SHA-256 with the audit key named by `keyId`.
   */
  v: 1 | 2;
  /** v2: the id of the audit key the hash was made with (src/core/audit/keys.ts), so a rotated key still verifies. */
  keyId?: string;
  at: Date;
  /** The mutation's name, e.g. `createJob`. */
  action: string;
  actor: AuditActor;
  /** The client address as the API saw it (src/api/client-address.ts). */
  address: string;
  /** Ids the call named or made (its arguments' ids, the result's id). */
  targetIds: string[];
  /** `OK`, or the error code the client was given (e.g. `FORBIDDEN`, `BAD_USER_INPUT`). */
  outcome: string;
  /** The error's message when the call was refused (at most 500 characters). */
  error: string | null;
  /** Canonical JSON, secrets redacted: the arguments. */
  args: string;
  /** Canonical JSON, secrets redacted: the changed document before and after (only what changed, for an update); null where nothing was read. */
  before: string | null;
  after: string | null;
  /** The hash of the entry `seq - 1` (or of the anchor, or 64 zeros for the first entry ever). */
  prevHash: string;
  /** The hash (hex) of the canonical encoding of every field above: SHA-256 (v1) or HMAC-SHA-256 with the audit key (v2). */
  hash: string;
}

/**
 * A mutation call that has started and has no entry yet (collection `auditIntents`), written before
 * the mutation runs: the completed call's entry takes its `_id` and removes it. One left behind by
 * an API instance that died (its outcome never recorded) becomes an entry with the outcome
 * `UNKNOWN` (AUDIT_OUTCOME_UNKNOWN) when older than the recovery bound.
 */
export interface AuditIntentDoc {
  _id: string;
  at: Date;
  action: string;
  actor: AuditActor;
  address: string;
  targetIds: string[];
  /** As in an entry: canonical JSON, secrets redacted. */
  args: string;
}

/** The outcome of a call whose API instance ended before its outcome was recorded. */
export const AUDIT_OUTCOME_UNKNOWN = "UNKNOWN";

/** The hash before the first entry. */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

/**
 * The chain's bookkeeping (collection `auditChain`): `anchor`, the last entry retention removed
 * (the oldest kept entry links to its hash), `head`, the highest entry written so far (so
 * entries removed from the end are noticed), and `keyed`, the first `seq` written with the audit
 * key (entries below it may be unkeyed, v1; none from it on). Each is signed with the audit key
 * (`keyId`, `mac`) once the chain is keyed, so none can be moved without the key.
 */
export interface AuditChainDoc {
  _id: "anchor" | "head" | "keyed";
  seq: number;
  hash: string;
  /** anchor: the anchored entry's time, and when retention cut there. */
  at?: Date;
  truncatedAt?: Date;
  /** anchor: the retention in force when it cut, and the anchored entry itself (its hash is `hash`: its `at` cannot be changed unseen). */
  retentionMs?: number;
  entry?: AuditEntryDoc;
  /** The audit key that signed the record, and its HMAC over the record's fields (src/core/audit/keys.ts); absent on records written before the chain was keyed. */
  keyId?: string;
  mac?: string;
}

/** What verifyAuditLog reports at the first broken link. */
export const AuditBreak = {
  /** The entry's content no longer hashes to its stored hash. */
  ALTERED: "ALTERED",
  /** Entries are missing: a gap in `seq`, before the oldest kept entry, or at the end. */
  REMOVED: "REMOVED",
  /** An entry that does not follow the one before it (its `seq` or `prevHash` is not the next link). */
  INSERTED: "INSERTED",
  /** An entry or record with no keyed hash (SHA-256 only, as before the chain was keyed) where the chain is keyed: written without the key. */
  UNKEYED: "UNKEYED",
  /** An entry or record signed with a key id that is neither KAIROS_AUDIT_KEY's nor one of KAIROS_AUDIT_PREVIOUS_KEYS'. */
  UNKNOWN_KEY: "UNKNOWN_KEY",
} as const;
export type AuditBreak = (typeof AuditBreak)[keyof typeof AuditBreak];

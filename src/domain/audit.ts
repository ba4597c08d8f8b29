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
  /** Version of the canonical encoding the hash was taken over. */
  v: 1;
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
  /** SHA-256 (hex) of the canonical encoding of every field above. */
  hash: string;
}

/** The hash before the first entry. */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

/**
 * The chain's bookkeeping (collection `auditChain`): `anchor`, the last entry retention removed
 * (the oldest kept entry links to its hash), and `head`, the highest entry written so far (so
 * entries removed from the end are noticed).
 */
export interface AuditChainDoc {
  _id: "anchor" | "head";
  seq: number;
  hash: string;
  /** anchor: the anchored entry's time, and when retention cut there. */
  at?: Date;
  truncatedAt?: Date;
  /** anchor: the retention in force when it cut, and the anchored entry itself (its hash is `hash`: its `at` cannot be changed unseen). */
  retentionMs?: number;
  entry?: AuditEntryDoc;
}

/** What verifyAuditLog reports at the first broken link. */
export const AuditBreak = {
  /** The entry's content no longer hashes to its stored hash. */
  ALTERED: "ALTERED",
  /** Entries are missing: a gap in `seq`, before the oldest kept entry, or at the end. */
  REMOVED: "REMOVED",
  /** An entry that does not follow the one before it (its `seq` or `prevHash` is not the next link). */
  INSERTED: "INSERTED",
} as const;
export type AuditBreak = (typeof AuditBreak)[keyof typeof AuditBreak];

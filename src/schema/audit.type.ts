/** The audit trail's GraphQL types (docs/audit.md): entries, their filter, and what verification found. */
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { AuditBreak } from "../domain/index.js";
import { connectionTypes } from "./common.type.js";
import { JSONValue } from "./scalars.js";
import { DateTime } from "./scalars.js";

registerEnumType(AuditBreak, {
  name: "AuditBreak",
  description: "How the audit chain is broken where verification stopped.",
  valuesConfig: {
    ALTERED: { description: "The entry's content no longer hashes to its stored hash." },
    REMOVED: { description: "Entries are missing: a gap, entries before the oldest kept one that retention did not remove, or entries at the end." },
    INSERTED: { description: "An entry that is not the next link: its seq or the hash it names is not that of the entry before it." },
    UNKEYED: { description: "An entry or record without the audit key's hash (SHA-256 only) where the chain is keyed: written without the key." },
    UNKNOWN_KEY: { description: "An entry or record signed with a key that is neither KAIROS_AUDIT_KEY's nor one of KAIROS_AUDIT_PREVIOUS_KEYS'." },
  },
});

@ObjectType({ description: "One mutation call: who, when, from where, what, on which ids, how it ended, and what it changed." })
export class AuditEntry {
  @Field(() => ID)
  id!: string;

  @Field(() => Int, { description: "The entry's place in the hash chain (1, 2, 3 …)." })
  seq!: number;

  @Field(() => String, { description: "The mutation, e.g. `createJob`." })
  action!: string;

  @Field(() => String, { description: "Who called it: `user:<name>`, `apikey:<key id> (<name>)`, or `anonymous` (e.g. a failed login)." })
  actor!: string;

  @Field(() => ID, { nullable: true, description: "The calling user's id (for a login: the user who logged in)." })
  actorUserId!: string | null;

  @Field(() => String, { nullable: true })
  actorUsername!: string | null;

  @Field(() => String, { nullable: true, description: "The caller's role at the time (ADMIN: an administrator acting)." })
  actorRole!: string | null;

  @Field(() => ID, { nullable: true, description: "The API key the call was made with, if any." })
  actorApiKeyId!: string | null;

  @Field(() => DateTime)
  at!: Date;

  @Field(() => String, { description: "The client's address as the API saw it (KAIROS_TRUST_PROXY decides which hop)." })
  address!: string;

  @Field(() => [ID], { description: "The ids the call named or made." })
  targetIds!: string[];

  @Field(() => String, { description: "`OK`, or the error code the caller got (e.g. `FORBIDDEN`, `BAD_USER_INPUT`)." })
  outcome!: string;

  @Field(() => String, { nullable: true, description: "The refusal's message." })
  error!: string | null;

  @Field(() => JSONValue, { description: "The arguments, secrets redacted." })
  args!: unknown;

  @Field(() => JSONValue, { nullable: true, description: "The changed document before the call: for an update only the fields that changed; for a delete the whole document; null for a create or a call that changes no document read here." })
  before!: unknown;

  @Field(() => JSONValue, { nullable: true, description: "The document after the call, alike: the changed fields of an update, the whole of what a create made, null after a delete." })
  after!: unknown;

  @Field(() => String, { description: "The hash of the entry before it in the chain." })
  prevHash!: string;

  @Field(() => String, { description: "HMAC-SHA-256 of this entry's canonical encoding with the audit key (SHA-256 for an entry written before the chain was keyed)." })
  hash!: string;

  @Field(() => String, { nullable: true, description: "The id of the audit key the hash was made with (null: an entry written before the chain was keyed)." })
  keyId!: string | null;
}

export const { Edge: AuditEntryEdge, Connection: AuditEntryConnection } = connectionTypes(AuditEntry, "AuditEntry");

@InputType({ description: "Narrows auditLog: every field given must hold." })
export class AuditLogFilter {
  @Field(() => [String], { nullable: true, description: "Mutation names, e.g. [\"createJob\", \"deleteJob\"]." })
  actions?: string[] | null;

  @Field(() => ID, { nullable: true, description: "Calls by this user (administrators; a user may only name themselves)." })
  actorUserId?: string | null;

  @Field(() => ID, { nullable: true, description: "Calls made with this API key." })
  actorApiKeyId?: string | null;

  @Field(() => ID, { nullable: true, description: "Calls that named or made this id (a job, run, DAG, user, API key …)." })
  targetId?: string | null;

  @Field(() => String, { nullable: true, description: "`OK`, or an error code." })
  outcome?: string | null;

  @Field(() => DateTime, { nullable: true, description: "At or after this instant." })
  from?: Date | null;

  @Field(() => DateTime, { nullable: true, description: "Before this instant." })
  to?: Date | null;
}

@ObjectType({ description: "Where the audit chain breaks, if it does." })
export class AuditBrokenLink {
  @Field(() => AuditBreak)
  problem!: AuditBreak;

  @Field(() => Int, { nullable: true, description: "The entry where it breaks (entries removed from the end: the last kept one)." })
  seq!: number | null;

  @Field(() => ID, { nullable: true })
  entryId!: string | null;

  @Field(() => String)
  detail!: string;
}

@ObjectType({ description: "The result of checking the audit chain from its anchor to its head." })
export class AuditVerification {
  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => Int, { description: "Entries checked." })
  checked!: number;

  @Field(() => Int, { description: "The last entry retention removed (0: none); the oldest kept entry links to its hash." })
  anchorSeq!: number;

  @Field(() => String)
  anchorHash!: string;

  @Field(() => Int, { description: "The last entry checked." })
  lastSeq!: number;

  @Field(() => String, { description: "Its hash: kept somewhere else, it shows later whether the chain up to here was rewritten." })
  lastHash!: string;

  @Field(() => Int, { description: "The last entry checked that is unkeyed (SHA-256 only, written before the chain was keyed: anyone who can write to the store can recompute its hash); 0: none." })
  unkeyedThrough!: number;

  @Field(() => DateTime, { nullable: true, description: "When the chain was first written with the audit key. Later than your upgrade to keyed entries: the record was removed and made again (see docs/audit.md)." })
  keyedSince!: Date | null;

  @Field(() => AuditBrokenLink, { nullable: true, description: "The first broken link; null when the chain holds." })
  broken!: AuditBrokenLink | null;
}

/**
 * Idempotent submissions: the same idempotency key from the same user within 24 h gets the first
 * request's result and makes nothing new, also when the requests race.
 *
 * The first request inserts a PENDING record into `idempotency`; the unique index on
 * `{ownerId, key}` lets exactly one of racing requests do so. The winner runs the operation with
 * the record's id as its operation id (the created job's id, the triggered run's fireKey), so a
 * run repeated after a crash makes the same object again, which the store refuses as a duplicate.
 * Then it stores what it made (DONE). A repeat finding DONE reads that back; finding PENDING it
 * waits for the first to finish; finding PENDING past its lease (the first request's process
 * died) it takes the operation over. A failed first request removes its record, so the key can be
 * used again. Records expire after 24 h: through a TTL index, and on read, since a TTL monitor
 * deletes late (real MongoDB: once a minute).
 */
import { createHash } from "node:crypto";
import { ConcurrentChangeError, PreconditionError, ValidationError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import { newId, type Mongo } from "../store/index.js";
import {
  completeRecord,
  deleteExpiredRecord,
  deletePendingRecord,
  findRecord,
  insertRecord,
  takeOverRecord,
} from "../store/index.js";
import type { IdempotencyDoc } from "../domain/index.js";

/** How long a key is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentOperation<R> {
  /** The mutation's name; the same key for another mutation is a conflict. */
  operation: string;
  /** What the caller asked for; the same key with other input is a conflict. */
  input: unknown;
  /** Does the work. `opId` is the same for a takeover of the same request: derive created ids from it. */
  run(opId: string): Promise<R>;
  /** What to remember of the result (ids and counts). */
  save(result: R): Record<string, unknown>;
  /** The result again, from what was remembered. */
  load(saved: Record<string, unknown>): Promise<R>;
}

export interface IdempotencyOptions {
  /** A PENDING record older than this may be taken over by a repeat. @default 30 s */
  leaseMs?: number;
  /** How long a repeat waits for the first request to finish before answering ABORTED (retry for its result). @default 10 s */
  waitMs?: number;
  /** @default 25 ms */
  pollMs?: number;
}

export class IdempotencyService {
  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger },
    private readonly opts: IdempotencyOptions = {},
  ) {}

  async once<R>(ownerId: string, key: string, op: IdempotentOperation<R>): Promise<R> {
    if (!KEY_RE.test(key)) throw new ValidationError("idempotencyKey", "must be 1–255 printable ASCII characters without spaces (a UUID works well)");
    const fingerprint = fingerprintOf(op.operation, op.input);
    const leaseMs = this.opts.leaseMs ?? 30_000;
    const giveUpAt = Date.now() + (this.opts.waitMs ?? 10_000);
    for (;;) {
      const now = this.deps.clock();
      const record: IdempotencyDoc = {
        _id: newId(),
        ownerId,
        key,
        operation: op.operation,
        fingerprint,
        state: "PENDING",
        leaseUntil: new Date(now + leaseMs),
        result: null,
        createdAt: new Date(now),
        expiresAt: new Date(now + IDEMPOTENCY_WINDOW_MS),
      };
      if (await insertRecord(this.deps.mongo, record)) return this.execute(record, op);
      const first = await findRecord(this.deps.mongo, ownerId, key);
      if (!first) continue; // the first request failed (or its record expired) meanwhile: try again
      if (first.expiresAt.getTime() <= now) {
        await deleteExpiredRecord(this.deps.mongo, first._id, new Date(now));
        continue;
      }
      if (first.operation !== op.operation || first.fingerprint !== fingerprint) {
        throw new PreconditionError(
          `idempotency key "${key}" was used at ${first.createdAt.toISOString()} for ${first.operation} with different input; ` +
            "a retry must send the same request, and a different request needs a new key",
        );
      }
      if (first.state === "DONE") return op.load(first.result ?? {});
      if (first.leaseUntil.getTime() <= now) {
        // The first request's process died before it finished: take the operation over, with its id.
        const taken = await takeOverRecord(this.deps.mongo, first._id, first.leaseUntil, new Date(now + leaseMs));
        if (taken) {
          this.deps.log.info({ ownerId, operation: op.operation, opId: taken._id }, "taking over an idempotent request whose first attempt did not finish");
          return this.execute(taken, op);
        }
        continue;
      }
      if (Date.now() >= giveUpAt) {
        throw new ConcurrentChangeError(`a request with idempotency key "${key}" is still in progress; retry in a moment for its result`);
      }
      await new Promise((r) => setTimeout(r, this.opts.pollMs ?? 25));
    }
  }

  private async execute<R>(record: IdempotencyDoc, op: IdempotentOperation<R>): Promise<R> {
    let result: R;
    try {
      result = await op.run(record._id);
    } catch (e) {
      // Nothing was made (or what was made is refused as a duplicate next time): free the key.
      await deletePendingRecord(this.deps.mongo, record._id).catch(() => undefined);
      throw e;
    }
    await completeRecord(this.deps.mongo, record._id, op.save(result));
    return result;
  }
}

/** SHA-256 of the operation and its input in a canonical JSON form (keys sorted, null and undefined fields left out). */
export function fingerprintOf(operation: string, input: unknown): string {
  return createHash("sha256").update(canonical({ operation, input })).digest("hex");
}

/**
 * A JSON value (a JSON scalar argument such as a DAG trigger's params) as it is fingerprinted:
 * keys sorted, and `null` kept — in JSON data null is a value (`{"day": null}` overrides a
 * default), unlike in the GraphQL input objects around it, where null means "not given".
 */
export function jsonFingerprint(v: unknown): string {
  return canonical(v, true);
}

function canonical(v: unknown, keepNull = false): string {
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : canonical(x, keepNull))).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined && (keepNull || x !== null)) // an omitted field and a null one mean the same
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x, keepNull)}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

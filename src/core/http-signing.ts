/**
 * Signing HTTP jobs' requests (docs/job-kinds.md, "Verifying a request"). Every user has one
 * signing secret, made on their first HTTP run (or by rotateHttpSigningSecret) and shown only by
 * rotateHttpSigningSecret, once. A request carries
 *
 *   Kairos-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<run id>.<body>")>
 *
 * and, for a day after a rotation, a second v1 made with the previous secret, so a receiver can
 * switch secrets without refusing requests in between. The run id is signed with the body, so a
 * captured request cannot be replayed under another run id to slip past the receiver's
 * de-duplication; the timestamp lets it refuse old ones (we suggest 5 minutes).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../shared-state/index.js";
import { findHttpSigning, initHttpSigning, swapHttpSigning, type HttpSigningDoc, type Mongo } from "../store/index.js";

/** How long the previous secret still signs after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600_000;
/** How long an executor reuses a user's secrets before reading them again. */
const CACHE_MS = 5_000;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/** The hex HMAC-SHA256 of `<t>.<runId>.<body>` under `secret` (its UTF-8 bytes). */
export function signatureOf(secret: string, t: number, runId: string, body: string): string {
  return createHmac("sha256", secret).update(`${t}.${runId}.`).update(body).digest("hex");
}

/** The Kairos-Signature header value for a request made at `t` (unix seconds). */
export function signatureHeader(secrets: readonly string[], t: number, runId: string, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${signatureOf(s, t, runId, body)}`)].join(",");
}

/**
 * What a receiver does, for tests and for receivers written in TypeScript: true when one v1 of
 * `header` is the signature of `runId` and `body` under `secret`, and its t is within
 * `toleranceS` of `nowS`.
 */
export function verifySignature(header: string, secret: string, runId: string, body: string, nowS: number, toleranceS = 300): boolean {
  const parts = header.split(",").map((p) => p.trim().split("=", 2) as [string, string]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const want = Buffer.from(signatureOf(secret, t, runId, body), "hex");
  // Only 64 hex digits can be a signature: anything else (Buffer.from would decode "zz…" to fewer
  // bytes, and timingSafeEqual throw on the lengths) is a mismatch, never an exception.
  return parts.some(([k, v]) => k === "v1" && v !== undefined && /^[0-9a-fA-F]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, "hex"), want));
}

export class HttpSigning {
  private readonly cache = new Map<string, { at: number; secrets: Promise<string[]> }>();

  constructor(private readonly deps: { mongo: Mongo; clock: Clock }) {}

  /** The secrets a request of `ownerId` is signed with now: the current one, and the previous one during its grace. */
  secretsFor(ownerId: string): Promise<string[]> {
    const now = this.deps.clock();
    const hit = this.cache.get(ownerId);
    if (hit && now - hit.at < CACHE_MS) return hit.secrets;
    const secrets = this.load(ownerId, now);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(ownerId, { at: now, secrets });
    secrets.catch(() => this.cache.delete(ownerId));
    return secrets;
  }

  private async load(ownerId: string, now: number): Promise<string[]> {
    const doc = (await findHttpSigning(this.deps.mongo, ownerId)) ?? (await initHttpSigning(this.deps.mongo, ownerId, this.fresh(now, null)));
    if (!doc) throw new Error(`user ${ownerId} not found: cannot sign the request`);
    return doc.previous && doc.previousUntil && doc.previousUntil.getTime() > now ? [doc.current, doc.previous] : [doc.current];
  }

  /**
   * Makes the user a new secret and returns it (the only time it is shown). The one it replaces
   * still signs for {@link PREVIOUS_SECRET_GRACE_MS}.
   */
  async rotate(userId: string): Promise<HttpSigningDoc> {
    for (let i = 0; i < 5; i++) {
      const now = this.deps.clock();
      const old = await findHttpSigning(this.deps.mongo, userId);
      const next = this.fresh(now, old?.current ?? null);
      if (await swapHttpSigning(this.deps.mongo, userId, old?.current ?? null, next)) {
        this.cache.delete(userId);
        return next;
      }
    }
    throw new Error("the signing secret changed under five rotations in a row; try again");
  }

  private fresh(now: number, previous: string | null): HttpSigningDoc {
    return {
      current: newSigningSecret(),
      createdAt: new Date(now),
      previous,
      previousUntil: previous ? new Date(now + PREVIOUS_SECRET_GRACE_MS) : null,
    };
  }
}

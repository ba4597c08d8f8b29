/**
 * Sends one attempt of a delivery and records it: takes the delivery (a conditional update, so of
 * two dispatchers one sends), signs and posts it, then marks it DELIVERED, PENDING again with a
 * backoff (a 5xx, 408, 425, 429, a timeout or no answer, while attempts remain) or FAILED.
 */
import { AlertDeliveryStatus, type AlertDeliveryDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import { settleDelivery, takeDelivery, type Mongo } from "../../store/index.js";
import type { HttpSigning } from "../http-signing.js";
import type { HttpAgents } from "../ssrf.js";
import { postWebhook, webhookRefusal, type WebhookResult } from "./webhook.js";

export interface SenderOptions {
  /** A webhook call's timeout. @default 10 s */
  timeoutMs: number;
  /** Attempts before a delivery is given up. @default 8 */
  maxAttempts: number;
  /** The first retry's delay, doubled each time up to maxBackoffMs. @default 1 s */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_SENDER: SenderOptions = { timeoutMs: 10_000, maxAttempts: 8, backoffMs: 1_000, maxBackoffMs: 5 * 60_000 };

export class AlertSender {
  constructor(
    private readonly deps: { mongo: Mongo; signing: Pick<HttpSigning, "secretsFor">; agents: HttpAgents; clock: Clock; options: SenderOptions; userAgent: string },
  ) {}

  /** Why a webhook to `url` would be refused by this sender's agents, as far as can be told now (null: it would go). */
  refusal(url: string): Promise<string | null> {
    return webhookRefusal(url, this.deps.agents);
  }

  /** One attempt of `d` if it can be taken; the delivery after it (null: another sender had it). */
  async attempt(d: AlertDeliveryDoc, opts: { retry: boolean } = { retry: true }): Promise<AlertDeliveryDoc | null> {
    const o = this.deps.options;
    const now = this.deps.clock();
    const taken = await takeDelivery(this.deps.mongo, d, new Date(now), new Date(now + o.timeoutMs * 2 + 5_000));
    if (!taken) return null;
    let result: WebhookResult;
    try {
      const secrets = await this.deps.signing.secretsFor(taken.ownerId);
      result = await postWebhook(
        { url: taken.url, body: taken.body ?? "", deliveryId: taken._id, ruleId: taken.ruleId, secrets, timeoutMs: o.timeoutMs, nowS: Math.floor(this.deps.clock() / 1000) },
        this.deps.agents,
        this.deps.userAgent,
      );
    } catch (e) {
      result = { ok: false, responseCode: null, retryable: true, error: `could not send: ${(e as Error).message}` };
    }
    const at = this.deps.clock();
    const again = opts.retry && result.retryable && taken.attempts < o.maxAttempts;
    const set: Partial<AlertDeliveryDoc> = result.ok
      ? { status: AlertDeliveryStatus.DELIVERED, deliveredAt: new Date(at), responseCode: result.responseCode, error: null }
      : again
        ? { status: AlertDeliveryStatus.PENDING, nextAttemptAt: new Date(at + backoff(o, taken.attempts)), responseCode: result.responseCode, error: result.error }
        : { status: AlertDeliveryStatus.FAILED, responseCode: result.responseCode, error: givenUp(result, taken.attempts, opts.retry) };
    await settleDelivery(this.deps.mongo, taken._id, taken.attempts, set);
    return { ...taken, ...set, leaseUntil: null };
  }
}

/** The delay after attempt `n` (1-based): backoffMs · 2^(n-1), capped, with the upper half jittered. */
function backoff(o: SenderOptions, n: number): number {
  const d = Math.min(o.maxBackoffMs, o.backoffMs * 2 ** (n - 1));
  return Math.round(d / 2 + (Math.random() * d) / 2);
}

function givenUp(r: WebhookResult, attempts: number, retried: boolean): string {
  if (!r.retryable || !retried) return r.error ?? "failed";
  return `${r.error ?? "failed"}; given up after ${attempts} attempts`;
}

/**
 * One webhook call of an alert delivery: a POST of the delivery's body, signed like an HTTP job's
 * request (core/http-signing.ts: `Kairos-Signature: t=…,v1=HMAC(secret, "<t>.<delivery id>.<body>")`
 * with the rule owner's signing secret), through the SSRF-filtering agents (core/ssrf.ts), with a
 * timeout; redirects are not followed. It says whether a failure is worth retrying (no response,
 * a timeout, 5xx, 408, 425, 429) and never throws.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { signatureHeader } from "../http-signing.js";
import { ssrfRefusal, urlRefusal, type HttpAgents } from "../ssrf.js";

export interface WebhookCall {
  url: string;
  body: string;
  deliveryId: string;
  ruleId: string;
  secrets: readonly string[];
  timeoutMs: number;
  nowS: number;
}

export interface WebhookResult {
  ok: boolean;
  responseCode: number | null;
  retryable: boolean;
  error: string | null;
}

const RETRYABLE_4XX = new Set([408, 425, 429]);
/** Most response bytes read (the rest is dropped). */
const RESPONSE_CAP = 4_096;

/** Who a refusal names, and the setting that opens a range to it. */
const WHO = "alert webhooks";
const SETTING = "KAIROS_ALERT_ALLOWED_CIDRS";

/**
 * Why a webhook to `url` would be refused by `agents` (loopback, private, … unless
 * KAIROS_ALERT_ALLOWED_CIDRS allows it), told as a rule is saved; null when, as far as can be told
 * now, it would go. Every call is checked again when it connects (postWebhook).
 */
export function webhookRefusal(url: string, agents: HttpAgents): Promise<string | null> {
  return urlRefusal(agents, url, WHO, SETTING);
}

export function postWebhook(call: WebhookCall, agents: HttpAgents, userAgent: string): Promise<WebhookResult> {
  return new Promise<WebhookResult>((resolve) => {
    let settled = false;
    const finish = (r: WebhookResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const url = new URL(call.url);
    const https = url.protocol === "https:";
    const headers = {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(call.body, "utf8")),
      "user-agent": userAgent,
      "Kairos-Delivery-Id": call.deliveryId,
      "Kairos-Alert-Rule-Id": call.ruleId,
      "Kairos-Signature": signatureHeader([...call.secrets], call.nowS, call.deliveryId, call.body),
    };
    let timedOut = false;
    const req = (https ? httpsRequest : httpRequest)(url, { method: "POST", headers, agent: https ? agents.https : agents.http });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`timed out after ${call.timeoutMs} ms`));
    }, call.timeoutMs);
    req.on("error", (e: Error & { code?: string }) => {
      const refusal = ssrfRefusal(e, WHO, SETTING);
      if (refusal) return finish({ ok: false, responseCode: null, retryable: false, error: refusal });
      if (timedOut) return finish({ ok: false, responseCode: null, retryable: true, error: `timed out after ${call.timeoutMs} ms waiting for ${url.host}` });
      finish({ ok: false, responseCode: null, retryable: true, error: `request failed: ${e.code ? `${e.code}: ` : ""}${e.message}` });
    });
    req.on("response", (res) => {
      const code = res.statusCode ?? 0;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        if (text.length < RESPONSE_CAP) text += c.slice(0, RESPONSE_CAP - text.length);
      });
      const done = () => {
        if (code >= 200 && code < 300) return finish({ ok: true, responseCode: code, retryable: false, error: null });
        const retryable = code >= 500 || RETRYABLE_4XX.has(code);
        const why = code >= 300 && code < 400 ? `HTTP ${code}: redirects are not followed; point the rule at the final URL` : `HTTP ${code}${text ? `: ${text.slice(0, 200)}` : ""}`;
        finish({ ok: false, responseCode: code, retryable, error: why });
      };
      res.on("end", done);
      res.on("error", () => done());
    });
    req.end(call.body);
  });
}

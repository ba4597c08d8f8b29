/**
 * An HTTP job's attempt: one request made by the executor itself (no process, no sandbox), signed
 * for its owner, through the SSRF-filtering agents, stopped by the job's timeout and by the
 * attempt's abort (cancel, lost lease, shutdown). What it got back is the run's `httpResponse`;
 * which failures are retried is decided here (`retryable`) and applied by the run's policy.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { HTTP_RESPONSE_BODY_CAP } from "../../domain/index.js";
import type { HttpResponseRecord, HttpSpec, RunDoc } from "../../domain/index.js";
import { formatStatusRange, isSuccessStatus, signatureHeader } from "../../core/index.js";
import type { AbortLike } from "../abort.js";
import type { HttpAttemptResult, ProcessResult } from "../outcome.js";
import { ssrfRefusal, type HttpAgents } from "../../core/index.js";

export interface HttpJobDeps {
  agents: HttpAgents;
  /** The owner's signing secrets (the current one first). */
  secretsFor(ownerId: string): Promise<string[]>;
  userAgent: string;
}

/** Statuses other than 5xx that say "try again later". */
const RETRYABLE_4XX = new Set([408, 425, 429]);
/** Response headers kept on the run, at most. */
const MAX_KEPT_HEADERS = 64;

export async function runHttpAttempt(run: RunDoc, token: number, deps: HttpJobDeps, signal: AbortLike): Promise<ProcessResult & { http: HttpAttemptResult }> {
  const started = performance.now();
  const spec = run.spec.http!;
  const elapsed = () => Math.round(performance.now() - started);
  const base = { exitCode: null, signal: null, timedOut: false, aborted: false, abortReason: null, spawnError: null, truncated: false, outputBytes: 0 };
  let secrets: string[];
  try {
    secrets = await deps.secretsFor(run.ownerId);
  } catch (e) {
    const error = `could not read the signing secret: ${(e as Error).message}`;
    return { ...base, outputTail: error, durationMs: elapsed(), http: { response: null, succeeded: false, retryable: true, error } };
  }
  const body = spec.body ?? "";
  const headers: Record<string, string> = {
    "user-agent": deps.userAgent,
    ...spec.headers,
    "Kairos-Run-Id": run._id,
    "Kairos-Job-Id": run.jobId,
    "Kairos-Attempt": String(run.attempt),
    "Kairos-Fencing-Token": String(token),
    "Kairos-Scheduled-For": run.scheduledFor.toISOString(),
    "Kairos-Signature": signatureHeader(secrets, Math.floor(Date.now() / 1000), run._id, body),
  };
  if (spec.body !== null) headers["content-length"] = String(Buffer.byteLength(body, "utf8"));

  const outcome = await send(spec, headers, body, deps.agents, run.spec.timeoutMs, signal);
  const durationMs = elapsed();
  const line = `${spec.method} ${spec.url} → ${outcome.response ? outcome.response.status : "no response"} (${durationMs} ms)`;
  const common = { ...base, timedOut: outcome.timedOut, aborted: outcome.aborted, abortReason: outcome.abortReason, durationMs };
  if (outcome.response) outcome.response.durationMs = durationMs;
  if (outcome.failure !== null) {
    return { ...common, outputTail: `${line}\n${outcome.failure}`, http: { response: outcome.response, succeeded: false, retryable: outcome.retryable, error: outcome.failure } };
  }
  const r = outcome.response!;
  const tail = `${line}\n${r.body.slice(0, 4096)}`;
  if (isSuccessStatus(spec, r.status)) return { ...common, outputTail: tail, http: { response: r, succeeded: true, retryable: false, error: null } };
  const allowed = spec.successStatuses.map(formatStatusRange).join(", ");
  const retryable = r.status >= 500 || RETRYABLE_4XX.has(r.status);
  const error = retryable
    ? `HTTP ${r.status}: not a success status (success: ${allowed}); 5xx, 408, 425 and 429 are retried by the job's retry policy`
    : r.status >= 300 && r.status < 400
      ? `HTTP ${r.status}: redirects are not followed (location: ${r.headers["location"] ?? "none"}); point the job at the final URL, or list ${r.status} in successStatuses`
      : `HTTP ${r.status}: not a success status (success: ${allowed}); such responses are not retried`;
  return { ...common, outputTail: `${tail}`, http: { response: r, succeeded: false, retryable, error } };
}

interface Sent {
  response: HttpResponseRecord | null;
  /** Set when it failed before a complete response: why. */
  failure: string | null;
  retryable: boolean;
  timedOut: boolean;
  aborted: boolean;
  abortReason: string | null;
}

/** Sends the request; resolves with what came back, or why nothing did. Never rejects. */
function send(spec: HttpSpec, headers: Record<string, string>, body: string, agents: HttpAgents, timeoutMs: number, signal: AbortLike): Promise<Sent> {
  return new Promise<Sent>((resolve) => {
    const url = new URL(spec.url);
    const https = url.protocol === "https:";
    const state = { timedOut: false, aborted: false, abortReason: null as string | null };
    let settled = false;
    const finish = (s: Omit<Sent, "timedOut" | "aborted" | "abortReason">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({ ...s, ...state });
    };
    let req: ReturnType<typeof httpRequest>;
    try {
      req = (https ? httpsRequest : httpRequest)(url, { method: spec.method, headers, agent: https ? agents.https : agents.http });
    } catch (e) {
      // A request Node refuses to send (a header value submission let through, from a job saved
      // before it was checked): the same request would be refused again, so not retried.
      const err = e as Error & { code?: string };
      resolve({ response: null, failure: `the request could not be sent: ${err.code ? `${err.code}: ` : ""}${err.message}`, retryable: false, timedOut: false, aborted: false, abortReason: null });
      return;
    }
    const timer = setTimeout(() => {
      state.timedOut = true;
      req.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => {
      state.aborted = true;
      state.abortReason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
      req.destroy(new Error(`aborted: ${state.abortReason}`));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });

    req.on("error", (e: Error & { code?: string }) => {
      const refusal = ssrfRefusal(e);
      if (refusal) return finish({ response: null, failure: refusal, retryable: false });
      if (state.timedOut) return finish({ response: null, failure: `timed out after ${timeoutMs} ms waiting for ${url.host}`, retryable: true });
      if (state.aborted) return finish({ response: null, failure: `stopped: ${state.abortReason}`, retryable: true });
      finish({ response: null, failure: `request failed: ${e.code ? `${e.code}: ` : ""}${e.message}`, retryable: true });
    });
    req.on("response", (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      const record = (): HttpResponseRecord => ({ status: res.statusCode ?? 0, headers: keptHeaders(res), body: utf8Head(Buffer.concat(chunks)), bodyTruncated: truncated, durationMs: 0 });
      res.on("data", (chunk: Buffer) => {
        if (kept >= HTTP_RESPONSE_BODY_CAP) {
          truncated = true;
          // Enough kept: the rest is not read (the connection is not reused).
          res.destroy();
          return finish({ response: record(), failure: null, retryable: false });
        }
        const room = HTTP_RESPONSE_BODY_CAP - kept;
        if (chunk.length > room) truncated = true;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        kept += Math.min(room, chunk.length);
      });
      res.on("end", () => finish({ response: record(), failure: null, retryable: false }));
      res.on("error", (e) => {
        if (settled) return;
        const why = state.timedOut ? `timed out after ${timeoutMs} ms reading the response` : state.aborted ? `stopped: ${state.abortReason}` : `the response broke off: ${e.message}`;
        finish({ response: record(), failure: why, retryable: true });
      });
    });
    req.end(body.length > 0 ? body : undefined);
  });
}

function keptHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined || n++ >= MAX_KEPT_HEADERS) continue;
    out[k] = (Array.isArray(v) ? v.join(", ") : v).slice(0, 4096);
  }
  return out;
}

/** The bytes as UTF-8, without a character cut in half at the end (the cap may cut one). */
function utf8Head(b: Buffer): string {
  let i = b.length - 1;
  let cont = 0;
  while (i >= 0 && cont < 3 && (b[i]! & 0xc0) === 0x80) {
    i--;
    cont++;
  }
  if (i >= 0 && b[i]! >= 0xc0) {
    const need = b[i]! >= 0xf0 ? 3 : b[i]! >= 0xe0 ? 2 : 1;
    if (cont < need) return b.subarray(0, i).toString("utf8");
  }
  return b.toString("utf8");
}

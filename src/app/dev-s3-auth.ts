/**
 * AWS Signature Version 4 checks in front of the embedded S3 server (dev and tests). s3rver itself
 * does not verify V4 signatures ("unimplemented" in its source): without this, anyone on the
 * loopback interface could read or write any object, and a presigned URL's expiry and signed
 * Content-Length would mean nothing in dev. With it, the embedded server refuses what S3 refuses:
 * an unsigned request, a wrong signature, an expired presigned URL, a PUT of another size than the
 * one signed. The payload hash is taken as declared (as UNSIGNED-PAYLOAD is), not recomputed.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export interface SigV4Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Why a request is refused, as S3 says it, or null when its signature holds. */
export interface SigV4Refusal {
  status: number;
  code: string;
  message: string;
}

const MAX_SKEW_MS = 15 * 60_000;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export function checkSigV4(req: Pick<IncomingMessage, "method" | "url" | "headers">, keys: SigV4Keys, now = Date.now()): SigV4Refusal | null {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  const params = parseQuery(q < 0 ? "" : url.slice(q + 1));
  const get = (name: string) => params.find(([k]) => k === name)?.[1];

  let credential: string | undefined;
  let signedHeaders: string | undefined;
  let signature: string | undefined;
  let amzDate: string | undefined;
  let payloadHash: string;
  let query = params;
  if (get("X-Amz-Algorithm") !== undefined) {
    if (get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Algorithm must be AWS4-HMAC-SHA256");
    credential = get("X-Amz-Credential");
    signedHeaders = get("X-Amz-SignedHeaders");
    signature = get("X-Amz-Signature");
    amzDate = get("X-Amz-Date");
    const expires = Number(get("X-Amz-Expires"));
    if (!amzDate || !Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_SECONDS) {
      return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Date and X-Amz-Expires (1 to 604800 seconds) are required");
    }
    const signedAt = parseAmzDate(amzDate);
    if (signedAt === null) return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Date is not a date");
    if (now > signedAt + expires * 1000) return refuse(403, "AccessDenied", "Request has expired");
    if (signedAt - now > MAX_SKEW_MS) return refuse(403, "RequestTimeTooSkewed", "X-Amz-Date is in the future");
    payloadHash = get("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD";
    query = params.filter(([k]) => k !== "X-Amz-Signature");
  } else {
    const auth = headerValue(req.headers.authorization);
    if (!auth) return refuse(403, "AccessDenied", "Access Denied: the request is not signed");
    const m = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(auth.trim());
    if (!m) return refuse(400, "AuthorizationHeaderMalformed", "the Authorization header is not an AWS4-HMAC-SHA256 signature");
    [, credential, signedHeaders, signature] = m;
    amzDate = headerValue(req.headers["x-amz-date"]);
    const signedAt = amzDate ? parseAmzDate(amzDate) : null;
    if (signedAt === null) return refuse(403, "AccessDenied", "x-amz-date is missing or not a date");
    if (Math.abs(now - signedAt) > MAX_SKEW_MS) return refuse(403, "RequestTimeTooSkewed", "the request time is too far from the server's");
    payloadHash = headerValue(req.headers["x-amz-content-sha256"]) ?? "UNSIGNED-PAYLOAD";
  }
  if (!credential || !signedHeaders || !signature || !amzDate) return refuse(400, "AuthorizationQueryParametersError", "the signature's parts are missing");
  const [accessKeyId, date, region, service, terminal, ...rest] = credential.split("/");
  if (accessKeyId !== keys.accessKeyId) return refuse(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
  if (!date || !region || service !== "s3" || terminal !== "aws4_request" || rest.length > 0 || !amzDate.startsWith(date)) {
    return refuse(400, "AuthorizationQueryParametersError", "the credential scope is malformed");
  }
  const headerNames = signedHeaders.split(";");
  if (!headerNames.includes("host")) return refuse(400, "AuthorizationQueryParametersError", "the host header must be signed");
  const canonicalHeaders = headerNames.map((h) => `${h}:${(headerValue(req.headers[h]) ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  const canonicalQuery = query
    .map(([k, v]) => [encodeRfc3986(k), encodeRfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonicalRequest = [req.method ?? "GET", path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  let key: Buffer = hmac(`AWS4${keys.secretAccessKey}`, date);
  for (const part of [region, "s3", "aws4_request"]) key = hmac(key, part);
  const expected = hmac(key, stringToSign).toString("hex");
  const ok = expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
  return ok ? null : refuse(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.");
}

/** S3's XML error body. */
export function errorXml(r: SigV4Refusal): string {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${esc(r.code)}</Code><Message>${esc(r.message)}</Message></Error>`;
}

function refuse(status: number, code: string, message: string): SigV4Refusal {
  return { status, code, message };
}

function parseQuery(raw: string): Array<[string, string]> {
  if (!raw) return [];
  return raw
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const i = pair.indexOf("=");
      const dec = (s: string) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      };
      return i < 0 ? [dec(pair), ""] : [dec(pair.slice(0, i)), dec(pair.slice(i + 1))];
    });
}

function encodeRfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function parseAmzDate(s: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : null;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(",") : v;
}

function sha256Hex(s: string): string {
  return createHash("sha256").update(s, "utf8").digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

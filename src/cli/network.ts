/**
 * Why the command line could not talk to the server, in words and with what to do, instead of the
 * network stack's own text (`ssl3_get_record:wrong version number`, `other side closed`,
 * `connect ECONNREFUSED`). An https:// URL to a server that speaks plain http (or the reverse) is
 * told apart by asking the server once more in the other protocol.
 */
import { request as httpRequest } from "node:http";
import { isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { parseDuration, ScheduleError } from "../timing/index.js";
import { CliError } from "./errors.js";

/** How long a request waits for the server's answer unless KAIROS_TIMEOUT says otherwise. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * KAIROS_TIMEOUT (an ISO-8601 duration, PT1S to PT1H): how long a request waits for the server's
 * answer. A server that took the connection and never answered held `kairos` for undici's five
 * minutes, then said "Headers Timeout Error".
 */
export function requestTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.KAIROS_TIMEOUT?.trim();
  if (!raw) return DEFAULT_TIMEOUT_MS;
  let ms: number;
  try {
    ms = parseDuration(raw, "KAIROS_TIMEOUT");
  } catch (e) {
    if (e instanceof ScheduleError) throw new CliError(e.message);
    throw e;
  }
  if (ms < 1000 || ms > 3_600_000) throw new CliError(`KAIROS_TIMEOUT: must be from PT1S to PT1H (got "${raw}")`);
  return ms;
}

/** A request that had no answer within `ms`. */
export function noAnswer(server: string, ms: number): CliError {
  const url = new URL(server);
  const s = ms / 1000;
  return new CliError(`no answer from ${url.host} within ${s} s (${server} took the request and sent nothing back): check that a Kairos server listens there and is not stalled, or set KAIROS_TIMEOUT=PT${Math.max(5 * s, 300)}S to wait longer`);
}

/** How long a probe in the other protocol may take. */
const PROBE_MS = 3000;

/** What an https:// request to a plain-http server fails with (the server's reply is not TLS). */
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|http request|record layer failure/i;
const NOT_TLS_CODES = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG", "ERR_SSL_HTTP_REQUEST", "EPROTO", "ECONNRESET"]);
/** What a plain-http request to a TLS server fails with (the server hangs up on bytes that are not TLS). */
const HUNG_UP_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "UND_ERR_CLOSED"]);
const UNTRUSTED_CODES = new Set(["DEPTH_ZERO_SELF_SIGNED_CERT", "SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "CERT_HAS_EXPIRED", "ERR_TLS_CERT_ALTNAME_INVALID"]);

const portOf = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/** The same server in the other protocol, as a user would give it (without the /graphql the CLI adds). */
function otherProtocol(url: URL): string {
  const other = new URL(url);
  other.protocol = url.protocol === "https:" ? "http:" : "https:";
  if (other.pathname === "/graphql") other.pathname = "/";
  return other.toString().replace(/\/$/, "");
}

/** Does the server answer plain HTTP there (any status)? */
export function speaksHttp(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: url.hostname, port: portOf(url), path: url.pathname, method: "GET", timeout: PROBE_MS }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** Does the server complete a TLS handshake there (whatever its certificate)? */
export function speaksTls(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const socket = tlsConnect({ host, port: portOf(url), rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) });
    const done = (yes: boolean) => {
      socket.destroy();
      resolve(yes);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once("secureConnect", () => done(true));
    socket.once("error", () => done(false));
  });
}

const whereToChange = "(in --server, KAIROS_SERVER, or log in again with it)";

/** A plain-http server at an https:// URL, or a TLS server at an http:// URL: the message, or null when the probe says otherwise. */
async function wrongProtocol(server: string, hint: { notTls?: boolean; hungUp?: boolean }): Promise<string | null> {
  const url = new URL(server);
  if (url.protocol === "https:" && hint.notTls && (await speaksHttp(url))) {
    return `${server}: the server at ${url.host} speaks plain http, not https: use ${otherProtocol(url)} ${whereToChange}`;
  }
  if (url.protocol === "http:" && hint.hungUp && (await speaksTls(url))) {
    return `${server}: the server at ${url.host} speaks https, not plain http: use ${otherProtocol(url)} ${whereToChange}`;
  }
  return null;
}

/** A failed fetch (`TypeError: fetch failed` with the socket's error as its cause) as a CliError that says what to do. */
export async function unreachable(server: string, e: unknown): Promise<CliError> {
  const cause = ((e as { cause?: unknown }).cause ?? e) as { code?: string; message?: string };
  const code = cause.code ?? "";
  const text = cause.message ?? String(e);
  const mismatch = await wrongProtocol(server, { notTls: NOT_TLS_CODES.has(code) || NOT_TLS.test(text), hungUp: HUNG_UP_CODES.has(code) || /other side closed|socket hang up/i.test(text) });
  if (mismatch) return new CliError(mismatch);
  const url = new URL(server);
  if (!code && text === "bad port") {
    // undici keeps the Fetch standard's list of ports browsers refuse (X11's 6000, IRC's 6665–6669, SIP's 5060, 10080 …).
    return new CliError(`cannot reach ${server}: port ${portOf(url)} is one that Node's fetch (as every browser) refuses to connect to, whatever listens there (the Fetch standard's "bad ports": 6000, 6665–6669, 5060, 10080 and others); run the server on another port, such as 4000`);
  }
  if (code === "ECONNREFUSED") {
    return new CliError(`cannot reach ${server}: nothing listens on ${url.hostname}:${portOf(url)} (connection refused); check the host and the port, and that the server is running (kairos dev prints the URL it listens on)`);
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new CliError(`cannot reach ${server}: the host name "${url.hostname}" is not known (${code === "ENOTFOUND" ? "no such host" : "the name server did not answer"}); check its spelling`);
  }
  if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT") {
    return new CliError(`cannot reach ${server}: no answer from ${url.host} (timed out); check the address, and any firewall or VPN on the way`);
  }
  if (UNTRUSTED_CODES.has(code)) {
    return new CliError(`cannot reach ${server}: its TLS certificate is not trusted (${text}); give the CA that signed it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem`);
  }
  return new CliError(`cannot reach ${server}: ${text}`);
}

/**
 * An answer that is not GraphQL's JSON: a TLS server's "plain HTTP request was sent to HTTPS port"
 * page (nginx and others answer so, with 400) is told as such; anything else by its status.
 */
export async function notGraphql(server: string, status: number, body: string): Promise<CliError> {
  const mismatch = /plain HTTP request was sent to HTTPS|speak(s)? HTTPS|HTTPS port/i.test(body) ? await wrongProtocol(server, { hungUp: true }) : null;
  if (mismatch) return new CliError(mismatch);
  return new CliError(`${server} answered HTTP ${status} without a GraphQL response`);
}

/**
 * The hand-over between the console's first-request script (boot/first-query.ts, which runs before
 * the app has loaded) and the app's GraphQL client (api/client.ts). The script offers the response
 * to the one request it sent; the client's `fetch` takes it, once, for a request with the same
 * operation, variables and credential, instead of sending that request again. Anything else (other
 * filters, another user, an offer more than 15 s old) goes to the network as always.
 */

const SLOT = "__kairosFirstQuery";
const FRESH_MS = 15_000;

export interface FirstQuery {
  operationName: string;
  variables: Record<string, unknown>;
  credential: string;
  /** Date.now() when it was sent. */
  at: number;
  response: Promise<Response>;
}

type Slot = { [SLOT]?: FirstQuery };

/** JSON with object keys sorted (urql sends variables so), to compare two sets of variables. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

export function offerFirstQuery(q: FirstQuery): void {
  (globalThis as Slot)[SLOT] = q;
}

/**
 * The offered response if this request (a GraphQL POST's JSON body and its Authorization header) is
 * the one it answers, else null. A response is taken once.
 */
export function takeFirstQuery(body: unknown, authorization: string | null): Promise<Response> | null {
  const g = globalThis as Slot;
  const q = g[SLOT];
  if (!q || typeof body !== "string") return null;
  let request: { operationName?: unknown; variables?: unknown };
  try {
    request = JSON.parse(body) as typeof request;
  } catch {
    return null;
  }
  if (request.operationName !== q.operationName || authorization !== `Bearer ${q.credential}`) return null;
  if (canonicalJson(request.variables ?? {}) !== canonicalJson(q.variables)) return null;
  delete g[SLOT];
  return Date.now() - q.at <= FRESH_MS ? q.response : null;
}

/** Raw HTTP for tests that look at status codes, headers and bodies, not just GraphQL results. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

export async function raw(url: string, init: RequestInit = {}): Promise<RawResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** POST a GraphQL operation as JSON, with optional token and extra headers. */
export function postGql(
  url: string,
  query: string,
  opts: { variables?: Record<string, unknown>; token?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return raw(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...opts.headers,
    },
    body: JSON.stringify({ query, variables: opts.variables ?? {} }),
  });
}

/** The URL of another path on the API's host (`/healthz`, `/nope`). */
export function sibling(graphqlUrl: string, path: string): string {
  return new URL(path, graphqlUrl).toString();
}

/** A minimal GraphQL client for tests: real HTTP (fetch) and real WebSocket (graphql-ws). */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";

export interface GqlResult<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; [k: string]: unknown } }>;
}

export async function gql<T = Record<string, any>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<GqlResult<T>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GqlResult<T>;
}

/** Like gql but fails the test on any error, returning data. */
export async function gqlOk<T = Record<string, any>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<T> {
  const r = await gql<T>(url, query, variables, token);
  if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
  return r.data!;
}

export async function login(url: string, username: string, password: string): Promise<string> {
  const d = await gqlOk<{ login: { token: string } }>(
    url,
    `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
    { u: username, p: password },
  );
  return d.login.token;
}

export function wsClient(wsUrl: string, token?: string): Client {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

/** Collects subscription events until `until` returns true or the timeout passes. */
export function collect<T>(
  client: Client,
  query: string,
  variables: Record<string, unknown>,
  until: (events: T[]) => boolean,
  timeoutMs: number,
): { done: Promise<{ events: T[]; errors: unknown[] }>; ready: Promise<void> } {
  const events: T[] = [];
  const errors: unknown[] = [];
  let readyResolve!: () => void;
  const ready = new Promise<void>((r) => (readyResolve = r));
  const done = new Promise<{ events: T[]; errors: unknown[] }>((resolve) => {
    let unsubscribe: () => void = () => undefined;
    const timer = setTimeout(() => {
      unsubscribe();
      resolve({ events, errors });
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve({ events, errors });
    };
    unsubscribe = client.subscribe<T>(
      { query, variables },
      {
        next: (v) => {
          if (v.errors) errors.push(...v.errors);
          if (v.data) events.push(v.data as T);
          if (until(events)) finish();
        },
        error: (e) => {
          errors.push(e);
          finish();
        },
        complete: finish,
      },
    );
    // The server acknowledges the connection before events can flow; give it a tick.
    setTimeout(readyResolve, 150);
  });
  return { done, ready };
}

export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs: number, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * The console's GraphQL client: queries and mutations over HTTP (POST /graphql), subscriptions
 * over graphql-ws on the same path. The credential travels in the Authorization header and in
 * graphql-ws's connection_init payload, never in a URL.
 */
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange, type CombinedError } from "@urql/core";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";
import { takeFirstQuery } from "../boot/handoff";
import { feedClosed, feedConnected } from "./live-feed";

export interface ApiClient {
  urql: Client;
  close(): void;
}

/** What the console does when the API says the credential is no longer good. */
export type OnUnauthenticated = (message: string) => void;

export function createApiClient(credential: string | null, onUnauthenticated: OnUnauthenticated): ApiClient {
  const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/graphql`;
  let ws: WsClient | null = null;
  if (credential) {
    ws = createWsClient({
      url: wsUrl,
      connectionParams: { authorization: `Bearer ${credential}` },
      lazy: true,
      // Reconnect after a restart of the API or a dropped network; subscriptions resume.
      retryAttempts: Infinity,
      shouldRetry: () => true,
      retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** n) * (0.5 + Math.random() / 2))),
      on: {
        // Views re-read what they show: events before this moment were not received.
        connected: () => feedConnected(),
        closed: (event) => {
          const code = (event as CloseEvent | undefined)?.code;
          feedClosed(code);
          // 4401/4403: the server refused the credential (expired, revoked, user disabled).
          if (code === 4401 || code === 4403) onUnauthenticated((event as CloseEvent).reason || "Your session ended; log in again.");
        },
      },
    });
  }
  const socket = ws;
  const urql = new Client({
    url: "/graphql",
    preferGetMethod: false,
    // The runs list's first page may already be on its way (boot/first-query.ts): take that answer.
    fetch: (input, init) => takeFirstQuery(init?.body, new Headers(init?.headers).get("authorization"))?.catch(() => fetch(input, init)) ?? fetch(input, init),
    fetchOptions: (): RequestInit => (credential ? { headers: { authorization: `Bearer ${credential}` } } : {}),
    exchanges: [
      cacheExchange,
      // A query or mutation refused for the credential (user disabled or deleted, token revoked)
      // ends the session with the API's reason, as a closed WebSocket does (views that only poll
      // have no WebSocket open).
      mapExchange({
        onError(error) {
          if (credential && isUnauthenticated(error)) onUnauthenticated(errorText(error) ?? "Your session ended; log in again.");
        },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || "" };
          return {
            subscribe(sink) {
              if (!socket) {
                sink.error(new Error("not logged in"));
                return { unsubscribe() {} };
              }
              const unsubscribe = socket.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return {
    urql,
    close: () => void socket?.dispose(),
  };
}

/** The first error's message, as the API wrote it (it says what was wrong and what is allowed). */
export function errorText(error: CombinedError | Error | undefined | null): string | null {
  if (!error) return null;
  if ("graphQLErrors" in error && error.graphQLErrors.length > 0) return error.graphQLErrors.map((e) => e.message).join("; ");
  if ("networkError" in error && error.networkError) return `Cannot reach the Kairos API: ${error.networkError.message}`;
  return error.message;
}

/** True when the API refused the caller's credential. */
export function isUnauthenticated(error: CombinedError | undefined | null): boolean {
  return !!error?.graphQLErrors.some((e) => e.extensions?.code === "UNAUTHENTICATED");
}

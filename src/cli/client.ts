/**
 * The GraphQL client of the command line: fetch for queries and mutations, graphql-ws for
 * subscriptions, with the typed documents generated from client/cli.graphql (codegen.ts).
 */
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { print } from "graphql";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { CliError } from "./errors.js";
import { DEFAULT_TIMEOUT_MS, noAnswer, notGraphql, unreachable } from "./network.js";
import type { Connection } from "./profiles.js";

interface GraphQLErrorShape {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: { code?: string; [k: string]: unknown };
}

/** An error the API answered (its `extensions.code` kept, e.g. NOT_FOUND). */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** The input field a BAD_USER_INPUT is about (extensions.field), e.g. `spec.command`. */
    readonly field?: string,
    /** The API's own messages, without the command line's advice (for a caller that advises otherwise). */
    readonly detail: string = message,
    /** A RATE_LIMITED refusal's wait (extensions.retryAfterSeconds). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The longest wait a rate-limited request is retried after, and how many times (a refusal ran nothing: it is safe to send again). */
const RATE_WAIT_MAX_S = 60;
const RATE_TRIES = 10;
/** A note on waiting is written at most this often (an apply of thousands waits before many requests). */
const NOTE_EVERY_MS = 10_000;

function apiError(errors: readonly GraphQLErrorShape[]): ApiError {
  const first = errors[0]!;
  const code = first.extensions?.code;
  const detail = errors.map((e) => e.message).join("; ");
  const msg = code === "UNAUTHENTICATED" ? `${detail} (log in with \`kairos login\`, or set KAIROS_TOKEN / KAIROS_API_KEY)` : detail;
  const field = typeof first.extensions?.field === "string" ? first.extensions.field : undefined;
  const wait = Number(first.extensions?.retryAfterSeconds);
  return new ApiError(msg, code, field, detail, Number.isFinite(wait) && wait >= 0 ? wait : undefined);
}

export interface SubscriptionSink<T> {
  next(value: T): void;
  error(err: Error): void;
  complete(): void;
}

export class GqlClient {
  private ws: Client | null = null;
  private notedAt = -Infinity;

  constructor(
    readonly conn: Connection,
    /** Where a note for the person goes (stderr), e.g. that the command waits for the rate limit. */
    private readonly note: (text: string) => void = () => {},
  ) {}

  get wsUrl(): string {
    return this.conn.server.replace(/^http/, "ws");
  }

  /**
   * One operation. A RATE_LIMITED refusal (the server ran nothing) is sent again after the wait it
   * names, up to RATE_TRIES times: `kairos apply` of a folder of 3,000 jobs went past the per-minute
   * budget and failed the rest, each "retry in 1 s".
   */
  async request<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables?: V): Promise<R> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.once(doc, variables);
      } catch (e) {
        const wait = e instanceof ApiError && e.code === "RATE_LIMITED" ? e.retryAfterSeconds : undefined;
        if (wait === undefined || wait > RATE_WAIT_MAX_S || tries >= RATE_TRIES) throw e;
        if (Date.now() - this.notedAt >= NOTE_EVERY_MS) {
          this.notedAt = Date.now();
          this.note(`the server asks to slow down (${(e as ApiError).detail}); waiting, and going on`);
        }
        await new Promise((r) => setTimeout(r, Math.max(wait, 0.05) * 1000));
      }
    }
  }

  private async once<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables?: V): Promise<R> {
    let res: Response;
    const timeoutMs = this.conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // The answer, headers and body, within the timeout: a server that takes the connection and
    // never answers no longer holds the command for undici's five minutes.
    const signal = AbortSignal.timeout(timeoutMs);
    const timedOut = (e: unknown) => signal.aborted && (e as Error | null)?.name === "TimeoutError";
    try {
      res = await fetch(this.conn.server, {
        method: "POST",
        headers: { "content-type": "application/json", ...(this.conn.credential ? { authorization: this.conn.credential } : {}) },
        body: JSON.stringify({ query: print(doc), variables: variables ?? {} }),
        signal,
      });
    } catch (e) {
      if (timedOut(e)) throw noAnswer(this.conn.server, timeoutMs);
      throw await unreachable(this.conn.server, e);
    }
    let body: { data?: R | null; errors?: GraphQLErrorShape[] };
    const text = await res.text().catch((e: unknown) => {
      if (timedOut(e)) throw noAnswer(this.conn.server, timeoutMs);
      return "";
    });
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw await notGraphql(this.conn.server, res.status, text);
    }
    if (body.errors?.length) throw apiError(body.errors);
    if (!body.data) throw new CliError(`${this.conn.server} answered HTTP ${res.status} with no data`);
    return body.data;
  }

  /**
   * One subscription on its own connection (so that a dropped connection ends it with an error the
   * caller can resume from, instead of graphql-ws silently re-subscribing from the start).
   * Returns a function that ends it.
   */
  subscribe<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables: V, sink: SubscriptionSink<R>): () => void {
    let closedByUs = false;
    let done = false;
    // Whether the server ever accepted this connection (connection_ack): a close before it says the
    // WebSocket could not be opened at all, not that an open one dropped.
    let connected = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      fn();
      void client.dispose();
    };
    const timeoutMs = this.conn.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const client = createClient({
      url: this.wsUrl,
      // The opening handshake and the server's ack within the request timeout: a server that took
      // the connection and never answered held `kairos logs -f` for ever.
      webSocketImpl: timedWebSocket(timeoutMs),
      connectionAckWaitTimeout: timeoutMs,
      connectionParams: this.conn.credential ? { authorization: this.conn.credential } : {},
      retryAttempts: 0,
      lazy: true,
      shouldRetry: () => false,
      on: {
        connected: () => {
          connected = true;
        },
        closed: (e) => {
          if (closedByUs) return;
          const ev = e as { code?: number; reason?: string };
          finish(() => sink.error(new ConnectionLost(`connection closed (${ev.code ?? "?"}${ev.reason ? `: ${ev.reason}` : ""})`, ev.code, connected)));
        },
      },
    });
    client.subscribe<R>(
      { query: print(doc), variables },
      {
        next: (v) => {
          if (v.errors?.length) finish(() => sink.error(apiError(v.errors as GraphQLErrorShape[])));
          else if (v.data) sink.next(v.data as R);
        },
        error: (e) => {
          if (Array.isArray(e)) finish(() => sink.error(apiError(e as GraphQLErrorShape[])));
          else if (e instanceof Error) finish(() => sink.error(new ConnectionLost(e.message, undefined, connected)));
          else {
            const ev = e as { code?: number; reason?: string };
            finish(() => sink.error(new ConnectionLost(`connection closed (${ev.code ?? "?"}${ev.reason ? `: ${ev.reason}` : ""})`, ev.code, connected)));
          }
        },
        complete: () => finish(() => sink.complete()),
      },
    );
    return () => {
      closedByUs = true;
      done = true;
      void client.dispose();
    };
  }

  dispose(): void {
    void this.ws?.dispose();
  }
}

/** `ws` with a limit on its opening handshake (graphql-ws makes the socket, with no options of its own). */
function timedWebSocket(handshakeTimeout: number): unknown {
  return class extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { handshakeTimeout });
    }
  };
}

/** The WebSocket closed or failed: the caller may subscribe again from where it was. */
export class ConnectionLost extends Error {
  override name = "ConnectionLost";
  constructor(
    message: string,
    readonly code: number | undefined,
    /** Whether the server had accepted the connection before it closed (false: it never opened). */
    readonly connected = false,
  ) {
    super(message);
  }
  /** Closes the server means for good (4400 bad request, 4401 unauthorized, 4403 forbidden, 4429 too many): no point retrying. */
  get final(): boolean {
    return this.code !== undefined && this.code >= 4400 && this.code < 4500 && this.code !== 4499;
  }
}

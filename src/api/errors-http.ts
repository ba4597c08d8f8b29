/**
 * The HTTP edge: every answer that is not a GraphQL result is still the GraphQL error envelope
 * `{"errors":[{"message":…,"extensions":{"code":…}}]}` — malformed or oversize bodies, wrong
 * content types and methods, unknown routes, whole requests refused by a rate limit, and anything
 * that fails in Express itself. Never Express's HTML page, never a stack trace, no X-Powered-By.
 * The codes are listed in docs/api-errors.md.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Response } from "express";
import { GraphQLError } from "graphql";
import { RateLimitedError } from "../domain/index.js";
import type { Logger } from "../support/index.js";

/** Extension fields of an error beyond its code. */
type Extra = Record<string, unknown>;

/** Answers with the GraphQL error envelope. */
export function sendError(res: Response, status: number, code: string, message: string, extra: Extra = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).type("application/json").send(JSON.stringify({ errors: [{ message, extensions: { code, ...extra } }] }));
}

/** A rate-limit refusal of a whole HTTP request: 429 with Retry-After. */
export function sendRateLimited(res: Response, e: RateLimitedError): void {
  res.setHeader("Retry-After", String(e.retryAfterSeconds));
  sendError(res, 429, "RATE_LIMITED", e.message, { limit: e.limit, retryAfterSeconds: e.retryAfterSeconds });
}

/** Before any route: nothing says which framework answers. */
export function hardenApp(app: Express): void {
  app.disable("x-powered-by");
  app.disable("etag");
}

/** JSON bodies up to `maxBytes`; what it refuses reaches {@link errorHandler} with a `type`. */
export function jsonBody(maxBytes: number): RequestHandler {
  return express.json({ limit: maxBytes });
}

/**
 * `/graphql` takes GET (queries in the URL) and POST with a JSON body. Anything else would reach
 * Apollo without a parsed body; it is refused here with what is allowed.
 */
export function graphqlRequestShape(): RequestHandler {
  return (req, res, next) => {
    if (req.method === "GET") {
      req.body ??= {};
      return next();
    }
    if (req.method !== "POST") {
      res.setHeader("Allow", "GET, POST");
      return sendError(res, 405, "BAD_REQUEST", `${req.method} is not allowed on /graphql; use POST with a JSON body, or GET`);
    }
    if (!req.is("application/json")) {
      const got = req.headers["content-type"] ?? "none";
      return sendError(res, 415, "BAD_REQUEST", `POST /graphql needs Content-Type: application/json (got ${got})`);
    }
    next();
  };
}

/** After every route. */
export function notFound(): RequestHandler {
  return (req, res) => sendError(res, 404, "NOT_FOUND", `no such route: ${req.method} ${req.path}`);
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  message?: string;
}

/**
 * Last: whatever went wrong in Express, answered in the envelope; unexpected errors are logged.
 * `maxBodyBytes` is the limit {@link jsonBody} was given, when there is a body parser.
 */
export function errorHandler(log: Logger, maxBodyBytes?: number): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof RateLimitedError) return sendRateLimited(res, err);
    const e = (err ?? {}) as BodyParserError;
    switch (e.type) {
      case "entity.parse.failed":
        return sendError(res, 400, "BAD_REQUEST", `request body is not valid JSON: ${e.message ?? "parse error"}`);
      case "entity.too.large":
        return sendError(res, 413, "BAD_REQUEST", `request body is larger than ${maxBodyBytes ?? e.limit} bytes (KAIROS_MAX_BODY_BYTES)`, {
          maxBytes: maxBodyBytes ?? e.limit,
        });
      case "charset.unsupported":
      case "encoding.unsupported":
        return sendError(res, 415, "BAD_REQUEST", `${e.message ?? "unsupported body encoding"}; send UTF-8 JSON`);
      case "request.aborted":
      case "request.size.invalid":
      case "stream.encoding.set":
        return sendError(res, 400, "BAD_REQUEST", e.message ?? "malformed request body");
    }
    if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
      return sendError(res, e.status, "BAD_REQUEST", "malformed request");
    }
    log.error({ err, method: req.method, path: req.path }, "HTTP request failed");
    sendError(res, 500, "INTERNAL_SERVER_ERROR", "Internal server error");
  };
}

/**
 * Apollo: a request whose every error is RATE_LIMITED and that produced no data was refused as a
 * whole, so it is answered 429 with Retry-After (the longest wait asked for). A request where
 * something else succeeded keeps 200 and carries the RATE_LIMITED error for its refused field.
 */
export function rateLimitStatusPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    requestDidStart: async () => ({
      willSendResponse: async ({ response }) => {
        if (response.body.kind !== "single") return;
        const { data, errors } = response.body.singleResult;
        if (data != null || !errors?.length || !errors.every((e) => e.extensions?.code === "RATE_LIMITED")) return;
        const wait = Math.max(...errors.map((e) => Number(e.extensions?.retryAfterSeconds) || 1));
        response.http.status = 429;
        response.http.headers.set("retry-after", String(wait));
      },
    }),
  };
}

/**
 * A subscription sent over HTTP is refused in the envelope (400 BAD_REQUEST) saying where
 * subscriptions are served, before any resolver runs: executed as a query it reached the
 * subscription's resolver without an event and answered INTERNAL_SERVER_ERROR.
 */
export function subscriptionOverHttpPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    requestDidStart: async () => ({
      didResolveOperation: async ({ operation }) => {
        if (operation?.operation !== "subscription") return;
        throw new GraphQLError(
          "subscriptions are served over WebSocket (graphql-ws, subprotocol graphql-transport-ws) at this same URL, not over HTTP; send queries and mutations over HTTP",
          { extensions: { code: "BAD_REQUEST", http: { status: 400 } } },
        );
      },
    }),
  };
}

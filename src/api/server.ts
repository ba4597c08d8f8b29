/**
 * The API role's transport: GraphQL over HTTP (Apollo Server 5 on Express 5) and over WebSocket
 * (graphql-ws) on the same port and path, plus health endpoints. Resolvers know nothing of it.
 *
 * Both transports apply the same guards in the same order before any resolver runs: the caller's
 * request budget (./rate-limit.ts), then the query limits (./limits.ts). HTTP answers that are not
 * GraphQL results keep the GraphQL error envelope (./errors-http.ts).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type RequestHandler } from "express";
import type { ExecutionArgs, GraphQLError, GraphQLFormattedError, GraphQLSchema } from "graphql";
import type { ConnectionInitMessage, SubscribePayload } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Caller } from "../auth/index.js";
import type { ApiGuardSettings } from "./settings.js";
import { RateLimitedError, UnauthenticatedError } from "../domain/index.js";
import { createContext, type Context, type Services } from "../resolvers/index.js";
import { toGraphQLError } from "../resolvers/index.js";
import { clientAddress } from "./client-address.js";
import { errorHandler, graphqlRequestShape, hardenApp, jsonBody, notFound, rateLimitStatusPlugin } from "./errors-http.js";
import { QueryLimits } from "./limits.js";
import { mountOps } from "./ops.js";
import { budgetKey } from "../auth/index.js";

export interface ApiServer {
  url: string;
  wsUrl: string;
  port: number;
  stop(): Promise<void>;
}

const PASS_THROUGH_CODES = new Set([
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "BAD_USER_INPUT",
  "NOT_FOUND",
  "CONFLICT",
  "RATE_LIMITED",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "OPERATION_RESOLUTION_FAILURE",
  "INTERNAL_SERVER_ERROR",
]);

/** Never let an unexpected error's message (driver text, stack) reach a client. */
function formatError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  if (typeof code === "string" && PASS_THROUGH_CODES.has(code)) {
    const { stacktrace: _drop, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions };
  }
  return { message: "Internal server error", locations: formatted.locations, path: formatted.path, extensions: { code: "INTERNAL_SERVER_ERROR" } };
}

interface Authenticated {
  principal: Caller | null;
  authError: string | null;
}

/** A JWT or an API key, checked against the user's current state (Authenticator). */
async function authenticate(services: Services, header: unknown): Promise<Authenticated> {
  if (typeof header !== "string" || header.trim() === "") return { principal: null, authError: null };
  try {
    return { principal: await services.auth.fromHeader(header), authError: null };
  } catch (e) {
    if (e instanceof UnauthenticatedError) return { principal: null, authError: e.message };
    throw e;
  }
}

function wsAuthorization(params: ConnectionInitMessage["payload"]): unknown {
  const p = params ?? {};
  return p.authorization ?? p.Authorization ?? (p.token ? `Bearer ${String(p.token)}` : undefined);
}

/** graphql-ws's code for "credentials no longer valid"; its client does not reconnect on it. */
const WS_UNAUTHORIZED = 4401;

/** What a WebSocket connection keeps between its messages. */
type WsExtra = {
  /** Stops watching the connection's credentials (SessionWatch). */
  unwatch?: () => void;
};

/** Codes of a document the API refused before running anything: unparsable, invalid, or over a query limit. */
const REFUSED_CODES = new Set(["GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED"]);

/** A refused document costs its sender `refusedCost` requests of its budget in all (one already taken). */
async function chargeRefusal(services: Services, principal: Caller | null, address: string): Promise<void> {
  const { key } = budgetKey(principal, address);
  await services.limits.requests.charge(key, services.limits.refusedCost - 1);
}

/** Apollo: charges the refusal penalty for a refused document (see KAIROS_RATE_REFUSED_COST). */
function refusalPenaltyPlugin(services: Services): ApolloServerPlugin<Context> {
  return {
    requestDidStart: async () => ({
      didEncounterErrors: async ({ errors, contextValue }) => {
        if (errors.some((e) => REFUSED_CODES.has(String(e.extensions?.code)))) await chargeRefusal(services, contextValue.principal, contextValue.clientAddress);
      },
    }),
  };
}

/** Spends one request from the caller's budget; RateLimitedError when it is spent. */
async function takeRequest(services: Services, principal: Caller | null, address: string): Promise<void> {
  const { key, who } = budgetKey(principal, address);
  await services.limits.requests.take(key, who);
}

/**
 * graphql-ws: every operation message (subscription, or query/mutation over the socket) spends the
 * caller's request budget and passes the query limits before it is executed.
 */
function guardWsOperation(services: Services, schema: GraphQLSchema, limits: QueryLimits, addressOf: (req: IncomingMessage) => string) {
  return async (
    ctx: { connectionParams?: ConnectionInitMessage["payload"]; extra: { request: IncomingMessage } },
    _id: string,
    payload: SubscribePayload,
  ): Promise<ExecutionArgs | GraphQLError[]> => {
    const { principal } = await authenticate(services, wsAuthorization(ctx.connectionParams));
    try {
      await takeRequest(services, principal, addressOf(ctx.extra.request));
    } catch (e) {
      if (e instanceof RateLimitedError) return [toGraphQLError(e)!];
      throw e;
    }
    const checked = limits.check(payload.query, payload.variables ?? undefined, payload.operationName);
    if (Array.isArray(checked)) {
      await chargeRefusal(services, principal, addressOf(ctx.extra.request));
      return checked;
    }
    return { schema, document: checked.document, variableValues: payload.variables, operationName: payload.operationName };
  };
}

export async function startApiServer(
  services: Services,
  schema: GraphQLSchema,
  opts: { port: number; host: string; ready?: () => Promise<boolean>; guard: ApiGuardSettings },
): Promise<ApiServer> {
  const { guard } = opts;
  const limits = new QueryLimits(schema, guard.query);
  const addressOf = (req: IncomingMessage) => clientAddress(req, guard.trustProxyHops);
  const app = express();
  hardenApp(app);
  const httpServer: Server = createServer(app);
  // A WebSocket message is held to the same size as an HTTP body (ws closes with 1009 past it).
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: guard.maxBodyBytes });
  const wsCleanup = useServer<Record<string, unknown>, WsExtra>(
    {
      schema,
      // Every operation spends the caller's request budget and passes the query limits first.
      onSubscribe: guardWsOperation(services, schema, limits, addressOf),
      // A bad credential does not refuse the connection: it is reported on the first subscription
      // as UNAUTHENTICATED (a clear error instead of an unexplained close). A good one is watched
      // while the connection is open: when it expires or is revoked, or its user is disabled or
      // deleted, the connection is closed with 4401 and the reason.
      onConnect: async (ctx) => {
        const { principal } = await authenticate(services, wsAuthorization(ctx.connectionParams));
        if (principal) {
          ctx.extra.unwatch = services.sessions.watch(principal, (reason) => ctx.extra.socket.close(WS_UNAUTHORIZED, closeReason(reason)));
        }
        return true;
      },
      onClose: (ctx) => ctx.extra.unwatch?.(),
      // Checked again for every subscription, so one started after a revocation is refused at once.
      context: async (ctx) => {
        const { principal, authError } = await authenticate(services, wsAuthorization(ctx.connectionParams));
        return createContext(services, principal, authError, addressOf(ctx.extra.request));
      },
    },
    wsServer,
  );

  const apollo = new ApolloServer<Context>({
    schema,
    formatError,
    includeStacktraceInErrorResponses: false,
    parseOptions: limits.parseOptions,
    validationRules: limits.validationRules,
    // Whether introspection is allowed is decided once, in QueryLimits' rules (both transports).
    introspection: true,
    // Documents are only taken as text, so every one passes the limits (no hash-only requests).
    persistedQueries: false,
    hideSchemaDetailsFromClientErrors: !guard.query.fieldSuggestions,
    // Shutdown is ours (src/main.ts stops every component in order); Apollo would re-send the signal.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      limits.apolloPlugin<Context>(),
      rateLimitStatusPlugin<Context>(),
      refusalPenaltyPlugin(services),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
    ],
  });
  await apollo.start();

  // Authenticated once per request, before the body is read: the budget is spent (or the request
  // refused) without parsing anything, and the context reuses the result.
  const requestBudget: RequestHandler = async (req, res, next) => {
    const auth = await authenticate(services, req.headers.authorization);
    res.locals.auth = auth;
    await takeRequest(services, auth.principal, addressOf(req));
    next();
  };

  mountOps(app, opts.ready);
  app.all(
    "/graphql",
    graphqlRequestShape(),
    requestBudget,
    jsonBody(guard.maxBodyBytes),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        const { principal, authError } = ((res.locals.auth as Authenticated | undefined) ?? (await authenticate(services, req.headers.authorization)));
        return createContext(services, principal, authError, addressOf(req));
      },
    }),
  );
  app.use(notFound());
  app.use(errorHandler(services.log, guard.maxBodyBytes));

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const shownHost = opts.host === "0.0.0.0" || opts.host === "127.0.0.1" ? "localhost" : opts.host;
  return {
    url: `http://${shownHost}:${port}/graphql`,
    wsUrl: `ws://${shownHost}:${port}/graphql`,
    port,
    stop: async () => {
      services.sessions.stop();
      await apollo.stop();
    },
  };
}

/** A WebSocket close reason is at most 123 bytes. */
function closeReason(reason: string): string {
  const b = Buffer.from(reason);
  return b.length <= 123 ? reason : b.subarray(0, 120).toString().replace(/\uFFFD$/, "") + "…";
}

/**
 * The API role's transport: GraphQL over HTTP (Apollo Server 5 on Express 5) and over WebSocket
 * (graphql-ws) on the same port and path, plus health endpoints and the web console (./console.ts).
 * Resolvers know nothing of it.
 *
 * Both transports apply the same guards in the same order before any resolver runs: the caller's
 * request budget (./guards.ts, auth/rate-limit.ts), then the query limits (./limits.ts); the
 * WebSocket side is ./ws-server.ts. HTTP answers that are not
 * GraphQL results keep the GraphQL error envelope (./errors-http.ts).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type RequestHandler } from "express";
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import { API_ERROR_CODES, createContext, type Context, type Services } from "../resolvers/index.js";
import { listen } from "../support/index.js";
import { clientAddress } from "./client-address.js";
import { mountConsole } from "./console.js";
import { errorHandler, graphqlRequestShape, hardenApp, jsonBody, notFound, rateLimitStatusPlugin, subscriptionOverHttpPlugin } from "./errors-http.js";
import { authenticate, refusalPenaltyPlugin, takeRequest, type Authenticated } from "./guards.js";
import { ScalarInputError, scalarVariablesPlugin } from "./scalar-inputs.js";
import { QueryLimits } from "./limits.js";
import { mountOps } from "./ops.js";
import type { ApiGuardSettings } from "./settings.js";
import { attachWebSocket } from "./ws-server.js";
import { graphqlSpanPlugin, traceGraphqlRequests } from "./tracing.js";

export interface ApiServer {
  url: string;
  wsUrl: string;
  port: number;
  stop(): Promise<void>;
}

/** The codes whose message reaches the client: ours, and Apollo Server's own for a request it refused. */
const PASS_THROUGH_CODES = new Set<string>([
  ...API_ERROR_CODES,
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "OPERATION_RESOLUTION_FAILURE",
]);

/**
 * Never let an unexpected error's message (driver text, stack) reach a client. A value a validation
 * rule of ours refused as BAD_USER_INPUT (an Int, DateTime or JSONObject that is none, ./scalar-inputs.ts) keeps that code:
 * Apollo gives every validation error GRAPHQL_VALIDATION_FAILED.
 */
export function formatError(formatted: GraphQLFormattedError, error?: unknown): GraphQLFormattedError {
  const own = error instanceof GraphQLError && error.originalError instanceof ScalarInputError ? error.originalError.extensions.code : undefined;
  const code = own ?? formatted.extensions?.code;
  if (typeof code === "string" && PASS_THROUGH_CODES.has(code)) {
    const { stacktrace: _drop, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions: { ...extensions, code } };
  }
  return { message: "Internal server error", locations: formatted.locations, path: formatted.path, extensions: { code: "INTERNAL_SERVER_ERROR" } };
}

/** Apollo Server with the query limits, the error formatting and the guards' plugins (not started). */
function createApollo(deps: {
  services: Services;
  schema: GraphQLSchema;
  limits: QueryLimits;
  httpServer: Server;
  wsCleanup: { dispose(): Promise<void> | void };
  fieldSuggestions: boolean;
}): ApolloServer<Context> {
  const { services, schema, limits, httpServer, wsCleanup } = deps;
  return new ApolloServer<Context>({
    schema,
    formatError,
    includeStacktraceInErrorResponses: false,
    parseOptions: limits.parseOptions,
    validationRules: limits.validationRules,
    // Whether introspection is allowed is decided once, in QueryLimits' rules (both transports).
    introspection: true,
    // Documents are only taken as text, so every one passes the limits (no hash-only requests).
    persistedQueries: false,
    hideSchemaDetailsFromClientErrors: !deps.fieldSuggestions,
    // Shutdown is ours (src/main.ts stops every component in order); Apollo would re-send the signal.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      limits.apolloPlugin<Context>(),
      scalarVariablesPlugin<Context>(),
      rateLimitStatusPlugin<Context>(),
      subscriptionOverHttpPlugin<Context>(),
      refusalPenaltyPlugin(services),
      graphqlSpanPlugin<Context>(),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
    ],
  });
}

export async function startApiServer(
  services: Services,
  schema: GraphQLSchema,
  opts: { port: number; host: string; ready?: () => Promise<boolean>; guard: ApiGuardSettings; console?: boolean },
): Promise<ApiServer> {
  const { guard } = opts;
  const limits = new QueryLimits(schema, guard.query);
  const addressOf = (req: IncomingMessage) => clientAddress(req, guard.trustProxyHops);
  const app = express();
  hardenApp(app);
  const httpServer: Server = createServer(app);
  // A WebSocket message is held to the same size as an HTTP body (ws closes with 1009 past it).
  const wsCleanup = attachWebSocket(httpServer, { services, schema, limits, addressOf, maxPayload: guard.maxBodyBytes });

  const apollo = createApollo({ services, schema, limits, httpServer, wsCleanup, fieldSuggestions: guard.query.fieldSuggestions });
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
    traceGraphqlRequests(),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        const { principal, authError } = ((res.locals.auth as Authenticated | undefined) ?? (await authenticate(services, req.headers.authorization)));
        return createContext(services, principal, authError, addressOf(req));
      },
    }),
  );
  if (opts.console !== false) mountConsole(app);
  app.use(notFound());
  app.use(errorHandler(services.log, guard.maxBodyBytes));

  await listen(httpServer, opts.port, opts.host);
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


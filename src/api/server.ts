/**
 * The API role's transport: GraphQL over HTTP (Apollo Server 5 on Express 5) and over WebSocket
 * (graphql-ws) on the same port and path, plus health endpoints. Resolvers know nothing of it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { expressMiddleware } from "@as-integrations/express5";
import express from "express";
import type { GraphQLFormattedError, GraphQLSchema } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Principal } from "../auth/tokens.js";
import { UnauthenticatedError } from "../errors.js";
import { createContext, type Context, type Services } from "../resolvers/index.js";
import { mountOps } from "./ops.js";

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

function authenticate(services: Services, header: unknown): { principal: Principal | null; authError: string | null } {
  if (typeof header !== "string" || header.trim() === "") return { principal: null, authError: null };
  try {
    return { principal: services.tokens.fromHeader(header), authError: null };
  } catch (e) {
    if (e instanceof UnauthenticatedError) return { principal: null, authError: e.message };
    throw e;
  }
}

export async function startApiServer(
  services: Services,
  schema: GraphQLSchema,
  opts: { port: number; host: string; ready?: () => Promise<boolean> },
): Promise<ApiServer> {
  const app = express();
  const httpServer: Server = createServer(app);
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql" });
  const wsCleanup = useServer<Record<string, unknown>, { ctx?: Context }>(
    {
      schema,
      // Credentials are checked once per connection; a bad token is reported on the first
      // subscription as UNAUTHENTICATED (a clear error instead of an unexplained close).
      context: (ctx) => {
        const params = ctx.connectionParams ?? {};
        const header = params.authorization ?? params.Authorization ?? (params.token ? `Bearer ${String(params.token)}` : undefined);
        const { principal, authError } = authenticate(services, header);
        return createContext(services, principal, authError);
      },
    },
    wsServer,
  );

  const apollo = new ApolloServer<Context>({
    schema,
    formatError,
    includeStacktraceInErrorResponses: false,
    // Shutdown is ours (src/main.ts stops every component in order); Apollo would re-send the signal.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
    ],
  });
  await apollo.start();

  mountOps(app, opts.ready);
  app.use(
    "/graphql",
    express.json({ limit: "1mb" }),
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        const { principal, authError } = authenticate(services, req.headers.authorization);
        return createContext(services, principal, authError);
      },
    }),
  );

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
      await apollo.stop();
    },
  };
}

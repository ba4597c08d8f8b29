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
import type { Caller } from "../auth/index.js";
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

function wsAuthorization(params: Record<string, unknown> | undefined): unknown {
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

export async function startApiServer(
  services: Services,
  schema: GraphQLSchema,
  opts: { port: number; host: string; ready?: () => Promise<boolean> },
): Promise<ApiServer> {
  const app = express();
  const httpServer: Server = createServer(app);
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql" });
  const wsCleanup = useServer<Record<string, unknown>, WsExtra>(
    {
      schema,
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
        const { principal, authError } = await authenticate(services, req.headers.authorization);
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

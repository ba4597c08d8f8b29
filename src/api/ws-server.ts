/**
 * GraphQL over WebSocket (graphql-ws) on the HTTP server's port and path. Every operation message
 * spends the caller's request budget and passes the query limits before it runs; credentials are
 * checked again for every subscription and watched while the connection is open.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { getOperationAST, type ExecutionArgs, type GraphQLError, type GraphQLSchema } from "graphql";
import type { ConnectionInitMessage, SubscribePayload } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import { RateLimitedError } from "../domain/index.js";
import { createContext, toGraphQLError, type Services } from "../resolvers/index.js";
import { authenticate, chargeRefusal, takeRequest } from "./guards.js";
import { scalarVariableErrors } from "./scalar-inputs.js";
import type { QueryLimits } from "./limits.js";

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
    const badScalars = scalarVariableErrors(schema, checked.document, getOperationAST(checked.document, payload.operationName), payload.variables);
    if (badScalars.length > 0) return badScalars;
    return { schema, document: checked.document, variableValues: payload.variables, operationName: payload.operationName };
  };
}

/** Serves GraphQL over WebSocket on `httpServer`; returns what disposes of it. */
export function attachWebSocket(
  httpServer: Server,
  deps: { services: Services; schema: GraphQLSchema; limits: QueryLimits; addressOf: (req: IncomingMessage) => string; maxPayload: number },
): { dispose(): Promise<void> | void } {
  const { services, schema, limits, addressOf } = deps;
  // Upgrades are handed over here rather than with `{ server: httpServer }`: ws would also forward
  // the HTTP server's own errors (a taken port) to graphql-ws, which prints them with a stack as
  // "Internal error emitted on the WebSocket server" before the caller can say what went wrong.
  const wsServer = new WebSocketServer({ noServer: true, path: "/graphql", maxPayload: deps.maxPayload });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    wsServer.handleUpgrade(req, socket, head, (ws) => wsServer.emit("connection", ws, req));
  };
  httpServer.on("upgrade", onUpgrade);
  const served = useServer<Record<string, unknown>, WsExtra>(
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
  return {
    dispose: () => {
      httpServer.off("upgrade", onUpgrade);
      return served.dispose();
    },
  };
}

/** A WebSocket close reason is at most 123 bytes. */
function closeReason(reason: string): string {
  const b = Buffer.from(reason);
  return b.length <= 123 ? reason : b.subarray(0, 120).toString().replace(/\uFFFD$/, "") + "…";
}

/**
 * The API's span of each GraphQL request over HTTP (issue #31 tracing): a SERVER span, child of
 * the caller's `traceparent` header when it sends one, named for the operation once Apollo has
 * resolved it (`graphql mutation triggerJob`). What the request does runs inside it, so a run it
 * creates carries its context (src/support/tracing.ts). Nothing happens when tracing is off.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import type { RequestHandler } from "express";
import { Kind } from "graphql";
import { annotateActiveSpan, endSpan, renameActiveSpan, runWithin, SpanKind, startSpan, TraceAttr, tracingOn } from "../support/index.js";

/** Express middleware for the GraphQL route, after the body is read (so the operation's name is known). */
export function traceGraphqlRequests(): RequestHandler {
  return (req, res, next) => {
    if (!tracingOn()) return next();
    const op = (req.body as { operationName?: unknown } | undefined)?.operationName;
    const name = typeof op === "string" && op !== "" ? op : undefined;
    const header = req.headers.traceparent;
    const span = startSpan(
      name ? `graphql ${name}` : "graphql",
      { "http.request.method": req.method, "url.path": req.path, [TraceAttr.operation]: name },
      { kind: SpanKind.SERVER, parent: typeof header === "string" ? header : null },
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      endSpan(span, { "http.response.status_code": res.statusCode }, res.statusCode >= 500 ? new Error(`HTTP ${res.statusCode}`) : undefined);
    };
    res.once("finish", end);
    res.once("close", end);
    runWithin(span, next);
  };
}

/** Names the request's span for its operation (type and name) once Apollo has resolved it. */
export function graphqlSpanPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      if (!tracingOn()) return;
      return {
        async didResolveOperation({ operation, operationName }) {
          const type = operation?.operation ?? "query";
          // Named by its name, else by its top-level fields (`graphql mutation triggerJob`).
          const fields = (operation?.selectionSet.selections ?? []).flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : []));
          renameActiveSpan(`graphql ${type} ${operationName ?? fields.join(",")}`.trim());
          annotateActiveSpan({ [TraceAttr.operationType]: type, [TraceAttr.operation]: operationName ?? undefined, "graphql.operation.fields": fields });
        },
        async didEncounterErrors({ errors }) {
          annotateActiveSpan({ "graphql.error.count": errors.length, "graphql.error.code": String(errors[0]?.extensions?.code ?? "") });
        },
      };
    },
  };
}

import "reflect-metadata";
import type { GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { AlertResolver } from "./alert.resolver.js";
import { ApiKeyResolver } from "./api-key.resolver.js";
import { ArtifactResolver } from "./artifact.resolver.js";
import { AuditResolver } from "./audit.resolver.js";
import { AuditTrail } from "./audit-trail.js";
import { AuthResolver } from "./auth.resolver.js";
import { DagResolver, DagRunResolver } from "./dag.resolver.js";
import { ErrorTranslator, ReadOnlyGuard } from "./errors.js";
import { HttpSigningResolver } from "./http-signing.resolver.js";
import { JobResolver } from "./job.resolver.js";
import { LimitsResolver } from "./limits.resolver.js";
import { NodeResolver } from "./node.resolver.js";
import { RunLogsResolver } from "./run-logs.resolver.js";
import { JobSpecResolver } from "./job-spec.resolver.js";
import { RunResolver } from "./run.resolver.js";
import { RunNodeResolver, RunTransitionNodeResolver } from "./run-node.resolver.js";
import { StatsResolver } from "./stats.resolver.js";
import { DagTaskWaitingResolver, JobProblemsResolver, RunWaitingResolver } from "./waits.resolver.js";

/**
 * The executable schema. Subscriptions use their own `subscribe` functions over the event bus;
 * the pub/sub given to type-graphql is only there because it requires one.
 */
export function buildKairosSchema(opts: { emitSchemaFile?: string } = {}): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [AuthResolver, ApiKeyResolver, AlertResolver, JobResolver, JobSpecResolver, RunResolver, RunLogsResolver, RunNodeResolver, RunTransitionNodeResolver, NodeResolver, LimitsResolver, DagResolver, DagRunResolver, ArtifactResolver, HttpSigningResolver, RunWaitingResolver, JobProblemsResolver, DagTaskWaitingResolver, StatsResolver, AuditResolver],
    pubSub: createPubSub(),
    // ErrorTranslator wraps the guard, so the guard's refusals are translated and logged too; the
    // audit trail wraps both, so it records every mutation with the code its caller got.
    globalMiddlewares: [AuditTrail, ErrorTranslator, ReadOnlyGuard],
    validate: false,
    emitSchemaFile: opts.emitSchemaFile ? { path: opts.emitSchemaFile, sortedSchema: true } : false,
  });
}

/**
 * A run's output: `run { logs logUrl logStatus logStatuses }` and `subscription runLogs`. Who may
 * read it is who may see the run (the service asks auth/access.ts): another user's run is NOT_FOUND.
 */
import { Arg, Ctx, FieldResolver, ID, Int, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import type { LogChunk as LogChunkView } from "../core/index.js";
import { LogChunk, Run, RunLogStatus } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";

interface RunLogsArgs {
  runId: string;
  fromOffset?: number | null;
  token?: number | null;
}

/** Authorises and checks the arguments before any chunk flows. */
async function subscribeRunLogs({ args, context }: SubscribeResolverData<unknown, RunLogsArgs, Context>) {
  try {
    const p = requireUser(context);
    return await context.services.logs.follow(p, args.runId, { token: args.token ?? null, fromOffset: args.fromOffset ?? 0 });
  } catch (e) {
    logRefusal(context, "Subscription.runLogs", e, args as unknown as Record<string, unknown>);
    throw toGraphQLError(e) ?? e;
  }
}

@Resolver(() => Run)
export class RunLogsResolver {
  @FieldResolver(() => [LogChunk], {
    description:
      "The output of one attempt (default: the latest), in order, from byte `offset` (default 0), at most `limit` chunks (default 100, at most 1000) and about 1 MiB. " +
      "Page on with offset = last chunk's offset + size. Works while the run goes and after its log is archived.",
  })
  logs(
    @Root() run: Run,
    @Ctx() ctx: Context,
    @Arg("offset", () => Int, { nullable: true }) offset?: number | null,
    @Arg("limit", () => Int, { nullable: true }) limit?: number | null,
    @Arg("token", () => Int, { nullable: true, description: "Which claim's log (LogChunk.token); default the latest." }) token?: number | null,
  ): Promise<LogChunkView[]> {
    return ctx.services.logs.read(requireUser(ctx), run.id, { offset, limit, token });
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: "A short-lived link (KAIROS_LOG_URL_TTL) to download the attempt's archived log, gzip. Null until it is archived, and once it expired: logStatus.reason says why.",
  })
  logUrl(@Root() run: Run, @Ctx() ctx: Context, @Arg("token", () => Int, { nullable: true }) token?: number | null): Promise<string | null> {
    return ctx.services.logs.url(requireUser(ctx), run.id, token ?? null);
  }

  @FieldResolver(() => RunLogStatus, { nullable: true, description: "Where the attempt's log is (default: the latest). Null when the run has printed nothing yet." })
  logStatus(@Root() run: Run, @Ctx() ctx: Context, @Arg("token", () => Int, { nullable: true }) token?: number | null): Promise<RunLogStatus | null> {
    return ctx.services.logs.status(requireUser(ctx), run.id, token ?? null);
  }

  @FieldResolver(() => [RunLogStatus], { description: "Every log of the run, one per claim (attempt), oldest first." })
  logStatuses(@Root() run: Run, @Ctx() ctx: Context): Promise<RunLogStatus[]> {
    return ctx.services.logs.statuses(requireUser(ctx), run.id);
  }

  @Subscription(() => LogChunk, {
    description:
      "A run's output as it is printed: the chunks from `fromOffset` of the log of claim `token` (default: the latest log, or the first to come), " +
      "then every new chunk, through the run's later attempts (each log from offset 0), until the run has ended. " +
      "To resume after a disconnect, subscribe with the last chunk's token and offset + size: nothing is missed or repeated.",
    subscribe: subscribeRunLogs,
  })
  runLogs(
    @Root() chunk: LogChunkView,
    @Arg("runId", () => ID) _runId: string,
    @Arg("fromOffset", () => Int, { nullable: true }) _fromOffset?: number | null,
    @Arg("token", () => Int, { nullable: true }) _token?: number | null,
  ): LogChunkView {
    return chunk;
  }
}

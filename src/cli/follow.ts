/**
 * Following a run: its log through the `runLogs` subscription, resumed after a dropped connection
 * from the last chunk's token and offset + size (nothing missed or repeated), then its end, and
 * the exit code the command line exits with (errors.ts EXIT).
 */
import {
  CliDagRunDocument,
  CliDagRunUpdatedDocument,
  CliFollowRunLogsDocument,
  CliRunDocument,
  type CliLogChunkFieldsFragment,
  type CliRunFieldsFragment,
} from "../../generated/client/graphql.js";
import { ConnectionLost, type GqlClient } from "./client.js";
import type { Ctx } from "./context.js";
import { CliError, EXIT } from "./errors.js";
import { paint, statusColour } from "./output.js";

// WITHDRAWN: a run staged ahead and taken back before its time (its job was paused or edited); it never ran.
export const TERMINAL = ["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD", "WITHDRAWN"];

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** The exit code of `kairos ... --follow` for a run that ended. */
export function exitCodeOf(run: Pick<CliRunFieldsFragment, "status" | "exitCode" | "signal">): number {
  if (run.status === "TIMED_OUT") return EXIT.TIMED_OUT;
  if (run.status === "CANCELLED" || run.status === "WITHDRAWN") return EXIT.CANCELLED;
  if (run.status === "SUCCEEDED") return run.exitCode ?? 0;
  if (run.exitCode != null) return run.exitCode;
  if (run.signal && SIGNALS[run.signal]) return 128 + SIGNALS[run.signal]!;
  return EXIT.NO_EXIT_CODE;
}

interface Cursor {
  token: number | null;
  offset: number;
}

/**
 * Writes the run's log as it comes (stdout to stdout, stderr and Kairos's notes to stderr) until
 * the stream completes. A dropped connection is resumed; the chunks given again are cut at the
 * cursor, so each byte is written once.
 */
export async function followLogs(ctx: Ctx, runId: string, opts: { fromOffset?: number } = {}): Promise<void> {
  const api = await ctx.api();
  const cursor: Cursor = { token: null, offset: opts.fromOffset ?? 0 };
  let failures = 0;
  let everConnected = false;
  const write = (c: CliLogChunkFieldsFragment) => {
    let data = c.data;
    if (cursor.token === c.token) {
      if (c.offset + c.size <= cursor.offset) return;
      if (c.offset < cursor.offset) data = Buffer.from(c.data, "utf8").subarray(cursor.offset - c.offset).toString("utf8");
    } else if (cursor.token !== null && c.token < cursor.token) return;
    cursor.token = c.token;
    cursor.offset = c.offset + c.size;
    if (c.stream === "STDOUT") ctx.io.out(data);
    else if (c.stream === "STDERR") ctx.io.err(data);
    else ctx.io.err(paint(ctx.io, "gray", `[kairos] ${data}${data.endsWith("\n") ? "" : "\n"}`));
  };
  for (;;) {
    const outcome = await new Promise<"done" | ConnectionLost>((resolve, reject) => {
      const stop = api.subscribe(
        CliFollowRunLogsDocument,
        { runId, fromOffset: cursor.offset, ...(cursor.token !== null ? { token: cursor.token } : {}) },
        {
          next: (v) => {
            failures = 0;
            everConnected = true;
            write(v.runLogs);
          },
          complete: () => resolve("done"),
          error: (e) => (e instanceof ConnectionLost ? resolve(e) : reject(e)),
        },
      );
      ctx.cleanups.push(stop);
    });
    if (outcome === "done") return;
    if (outcome.final) throw new CliError(`the log stream was refused: ${outcome.message}`);
    // A WebSocket that never opened: ask the server over HTTP once, whose failure says why (an
    // https:// URL to a plain-http server, nothing listening, the run not found) instead of
    // retrying for a minute and ending with "connection closed (1006)".
    if (!outcome.connected && !everConnected && failures === 0) await api.request(CliRunDocument, { id: runId });
    everConnected ||= outcome.connected;
    failures++;
    if (failures > 30) {
      if (!everConnected) throw new CliError(`could not open a WebSocket to ${api.wsUrl} (${outcome.message}), though ${api.conn.server} answers over HTTP: a proxy in front of the server must pass WebSocket upgrades`);
      throw new CliError(`lost the connection to ${api.conn.server} and could not resume (${outcome.message})`);
    }
    ctx.io.err(paint(ctx.io, "gray", `[kairos] ${outcome.message}; resuming the log at ${cursor.token === null ? "its start" : `token ${cursor.token}, byte ${cursor.offset}`}\n`));
    await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** Math.min(failures - 1, 4), 3_000)));
  }
}

/** The run once it has ended (polled: the log stream completes at its end, so this is at once). */
export async function runEnd(ctx: Ctx, runId: string): Promise<CliRunFieldsFragment> {
  const api = await ctx.api();
  for (let i = 0; ; i++) {
    const { run } = await api.request(CliRunDocument, { id: runId });
    if (TERMINAL.includes(run.status)) return run;
    if (i % 20 === 0 && i > 0 && ctx.io.interactive) ctx.io.err(`[kairos] run ${run.id} is ${run.status}\n`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Streams the run's log, then reports its end on stderr and returns the exit code to exit with. */
export async function followRun(ctx: Ctx, runId: string): Promise<number> {
  if (ctx.io.interactive) ctx.io.err(paint(ctx.io, "gray", `[kairos] following run ${runId} (Ctrl-C stops following; the run goes on)\n`));
  await followLogs(ctx, runId);
  const run = await runEnd(ctx, runId);
  const code = exitCodeOf(run);
  const detail = [run.exitCode != null ? `exit code ${run.exitCode}` : null, run.signal ? `signal ${run.signal}` : null, run.error !== `exit code ${run.exitCode}` ? run.error : null].filter(Boolean).join(", ");
  ctx.io.err(paint(ctx.io, statusColour(run.status), `[kairos] run ${run.id} ${run.status}${detail ? ` (${detail})` : ""}\n`));
  return code;
}

/** Every task row of a DAG run, page after page. */
async function dagRunTasks(api: GqlClient, dagRunId: string) {
  const first = await api.request(CliDagRunDocument, { id: dagRunId });
  const tasks = first.dagRun.tasks.edges.map((e) => e.node);
  for (let page = first.dagRun.tasks.pageInfo; page.hasNextPage; ) {
    const next = (await api.request(CliDagRunDocument, { id: dagRunId, after: page.endCursor })).dagRun.tasks;
    tasks.push(...next.edges.map((e) => e.node));
    page = next.pageInfo;
  }
  return tasks;
}

/** The order of a task attempt's (and a DAG run's) states; every other state is an end. */
const STEP: Record<string, number> = { PENDING: 0, QUEUED: 1, RUNNING: 2 };

/** Prints each task transition of a DAG run until it ends; the exit code: 0 succeeded, 1 failed, 130 cancelled. */
export async function followDagRun(ctx: Ctx, dagRunId: string): Promise<number> {
  const api = await ctx.api();
  let last = "RUNNING";
  const seen = new Set<string>();
  /**
   * How far each task attempt (and the DAG run) got in what was printed. The tasks' state is read
   * once when the stream starts, so an event sent before that read can arrive after it: "load
   * RUNNING" after "load SUCCEEDED". Such a step back is not printed.
   */
  const reached = new Map<string, number>();
  const line = (at: string, key: string, status: string, attempt: number, runId: string | null | undefined) => {
    const id = `${key}|${status}|${attempt}`;
    if (seen.has(id)) return;
    const step = STEP[status] ?? 3;
    if (step < (reached.get(`${key}|${attempt}`) ?? -1)) return;
    reached.set(`${key}|${attempt}`, step);
    seen.add(id);
    const time = new Date(at).toISOString().slice(11, 19);
    ctx.io.out(`${time}  ${key.padEnd(20)} ${paint(ctx.io, statusColour(status), status)}${attempt > 1 ? ` (attempt ${attempt})` : ""}${runId ? ` run ${runId}` : ""}\n`);
  };
  let snapshot: Promise<void> | null = null;
  await new Promise<void>((resolve, reject) => {
    const stop = api.subscribe(CliDagRunUpdatedDocument, { dagRunId }, {
      next: ({ dagRunUpdated: e }) => {
        // The stream starts at the DAG run's status as it is: what its tasks did before is read once.
        snapshot ??= dagRunTasks(api, dagRunId).then((tasks) => {
          for (const t of tasks) if (t.status !== "PENDING") line(e.at, t.mapIndex != null ? `${t.key}[${t.mapIndex}]` : t.key, t.status, t.attempt, t.run?.id);
        });
        void snapshot.then(() => {
          last = e.status;
          if (e.task) line(e.at, e.task.mapIndex != null ? `${e.task.key}[${e.task.mapIndex}]` : e.task.key, e.task.status, e.task.attempt, e.task.runId);
          else line(e.at, "(dag run)", e.status, 1, null);
        }, reject);
      },
      complete: () => void (snapshot ?? Promise.resolve()).then(() => resolve(), reject),
      error: (e) => reject(e instanceof ConnectionLost ? new CliError(`lost the connection while following DAG run ${dagRunId}: ${e.message}`) : e),
    });
    ctx.cleanups.push(stop);
  });
  const { dagRun } = await api.request(CliDagRunDocument, { id: dagRunId });
  last = dagRun.status;
  ctx.io.err(`[kairos] DAG run ${dagRunId} ${last}\n`);
  return last === "SUCCEEDED" ? 0 : last === "CANCELLED" ? EXIT.CANCELLED : EXIT.FAILED;
}

/** Helpers for the run-log tests: submit a job, find its run, follow its log. */
import type { Client } from "graphql-ws";
import { gqlOk } from "../helpers/graphql.js";

export interface Chunk {
  runId: string;
  attempt: number;
  token: number;
  offset: number;
  size: number;
  stream: "STDOUT" | "STDERR" | "SYSTEM";
  data: string;
}

export const CHUNK_FIELDS = "runId attempt token offset size stream data";

/** Creates a ONCE job running `command` now; its id. */
export async function runCommand(url: string, token: string, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `logs-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", timeout: "PT60S", command }, ...extra } },
    token,
  );
  return r.createJob.id;
}

/** The id and status of the job's (first) run, once it exists. */
export async function runOf(url: string, token: string, jobId: string, timeoutMs = 20_000): Promise<{ id: string; status: string }> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const d = await gqlOk<{ runs: { edges: Array<{ node: { id: string; status: string } }> } }>(url, `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { id status } } } }`, { id: jobId }, token);
    const run = d.runs.edges[0]?.node;
    if (run) return run;
    if (Date.now() > end) throw new Error(`job ${jobId} has no run`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function runStatus(url: string, token: string, runId: string): Promise<string> {
  const d = await gqlOk<{ run: { status: string } }>(url, `query($id: ID!) { run(id: $id) { status } }`, { id: runId }, token);
  return d.run.status;
}

/**
 * Follows `runLogs` until `stop(chunks)` or completion; resolves with the chunks, the errors, and
 * whether the server completed the subscription.
 */
export function follow(
  client: Client,
  vars: { runId: string; fromOffset?: number; token?: number },
  stop: (chunks: Chunk[]) => boolean = () => false,
  onChunk: (c: Chunk) => void = () => undefined,
  timeoutMs = 30_000,
): Promise<{ chunks: Chunk[]; errors: unknown[]; completed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Chunk[] = [];
    const errors: unknown[] = [];
    let settled = false;
    let unsubscribe = () => undefined as void;
    const finish = (completed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      resolve({ chunks, errors, completed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    unsubscribe = client.subscribe<{ runLogs: Chunk }>(
      { query: `subscription($runId: ID!, $fromOffset: Int, $token: Int) { runLogs(runId: $runId, fromOffset: $fromOffset, token: $token) { ${CHUNK_FIELDS} } }`, variables: vars },
      {
        next: (v) => {
          if (v.errors) errors.push(...v.errors);
          if (v.data) {
            chunks.push(v.data.runLogs);
            onChunk(v.data.runLogs);
            if (stop(chunks)) finish(false);
          }
        },
        error: (e) => {
          errors.push(e);
          finish(false);
        },
        complete: () => finish(true),
      },
    );
  });
}

/** The text of chunks of one log, checking that they are contiguous from `from`. */
export function contiguous(chunks: Chunk[], from = 0): string {
  let at = from;
  let text = "";
  for (const c of chunks) {
    if (c.offset !== at) throw new Error(`chunk at ${c.offset}, expected ${at}: ${JSON.stringify(chunks.map((x) => [x.offset, x.size]))}`);
    at += c.size;
    text += c.data;
  }
  return text;
}

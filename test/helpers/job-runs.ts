/**
 * Submit a one-off job through the API as a user and wait for its run to end: the attack suites'
 * (test/security) way of running a program exactly as a stranger would.
 */
import { gqlOk } from "./graphql.js";

export interface FinishedRun {
  id: string;
  status: string;
  exitCode: number | null;
  error: string | null;
  outputTail: string | null;
  usage: { peakMemoryMb: number | null; cpuSeconds: number | null } | null;
}

export const FINAL_STATUSES = new Set(["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD"]);

/** Creates a ONCE job (run now, one attempt, PT20S timeout unless `spec` says otherwise); its id. */
export async function submitJob(url: string, token: string, spec: Record<string, unknown>): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `j-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", timeout: "PT20S", ...spec } } },
    token,
  );
  return r.createJob.id;
}

/** The job's run once it has ended; throws after `timeoutMs`. */
export async function finishedRun(url: string, token: string, jobId: string, timeoutMs = 60_000): Promise<FinishedRun> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const d = await gqlOk<{ runs: { edges: Array<{ node: FinishedRun }> } }>(
      url,
      `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { id status exitCode error outputTail usage { peakMemoryMb cpuSeconds } } } } }`,
      { id: jobId },
      token,
    );
    const run = d.runs.edges[0]?.node;
    if (run && FINAL_STATUSES.has(run.status)) return run;
    if (Date.now() > end) throw new Error(`run of job ${jobId} did not finish: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

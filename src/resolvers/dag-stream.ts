/**
 * The `dagRunUpdated` stream: DAG events (task states an advance wrote, the DAG run's status) and
 * the run events of its task runs (their own transitions, which carry `dagRunId`), merged into one
 * async iterator (event-stream.ts: the bus subscriptions live as long as the iterator, and past
 * `maxBuffered` pending events the oldest are dropped; `dagRun` re-reads state).
 */
import type { RunEvents } from "../core/index.js";
import type { DagEvent, DagEvents } from "../dag/index.js";
import type { DagRunEvent } from "../schema/index.js";
import { dagEventOf, dagEventOfRun } from "./dag-mappers.js";
import { eventStream } from "./event-stream.js";

export interface DagStreamFilter {
  /** The caller may see this owner's DAG runs. */
  visible: (ownerId: string) => boolean;
  dagId: string | null;
  dagRunId: string | null;
}

export function dagStream(runEvents: RunEvents, dagEvents: DagEvents, f: DagStreamFilter, maxBuffered = 5_000): AsyncIterableIterator<DagRunEvent> {
  const matches = (ownerId: string, dagId: string, dagRunId: string) =>
    f.visible(ownerId) && (!f.dagId || f.dagId === dagId) && (!f.dagRunId || f.dagRunId === dagRunId);
  return eventStream<DagRunEvent>(async (push) => {
    const unsubscribes = await Promise.all([
      dagEvents.subscribe((e: DagEvent) => {
        if (matches(e.ownerId, e.dagId, e.dagRunId)) push(dagEventOf(e));
      }),
      runEvents.subscribe((run) => {
        // A DAG task's run has the DAG's id as its jobId.
        if (run.dagRunId && run.taskKey && matches(run.ownerId, run.jobId, run.dagRunId)) push(dagEventOfRun(run, run.jobId));
      }),
    ]);
    return async () => {
      for (const unsubscribe of unsubscribes) await unsubscribe();
    };
  }, maxBuffered);
}

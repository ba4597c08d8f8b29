/**
 * The `dagRunUpdated` stream: DAG events (task states an advance wrote, the DAG run's status) and
 * the run events of its task runs (their own transitions, which carry `dagRunId`), merged into one
 * async iterator (event-stream.ts: the bus subscriptions live as long as the iterator, and past
 * `maxBuffered` pending events the oldest are dropped; `dagRun` re-reads state). A stream of one DAG
 * run starts with its status as it is (`current`) and completes after its end.
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
  /**
   * With `dagRunId`: the DAG run's status now (`task: null`), read once the stream listens, so it
   * comes first and nothing between is missed; a stream of one DAG run completes after its end.
   */
  current?: () => Promise<DagRunEvent>;
}

const ENDED: ReadonlySet<string> = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);
/** The DAG run's own status event (`task: null`) saying it ended. */
const isEnd = (e: DagRunEvent): boolean => e.task === null && ENDED.has(e.status);

export function dagStream(runEvents: RunEvents, dagEvents: DagEvents, f: DagStreamFilter, maxBuffered = 5_000): AsyncIterableIterator<DagRunEvent> {
  const matches = (ownerId: string, dagId: string, dagRunId: string) =>
    f.visible(ownerId) && (!f.dagId || f.dagId === dagId) && (!f.dagRunId || f.dagRunId === dagRunId);
  return eventStream<DagRunEvent>(async (push) => {
    const unsubscribes = await Promise.all([
      dagEvents.subscribe((e: DagEvent) => {
        if (!matches(e.ownerId, e.dagId, e.dagRunId)) return;
        const event = dagEventOf(e);
        push(event, f.dagRunId !== null && isEnd(event));
      }),
      runEvents.subscribe((run) => {
        // A DAG task's run has the DAG's id as its jobId.
        if (run.dagRunId && run.taskKey && matches(run.ownerId, run.jobId, run.dagRunId)) push(dagEventOfRun(run, run.jobId));
      }),
    ]);
    if (f.dagRunId !== null && f.current) {
      const now = await f.current();
      push(now, isEnd(now));
    }
    return async () => {
      for (const unsubscribe of unsubscribes) await unsubscribe();
    };
  }, maxBuffered);
}

/**
 * The `dagRunUpdated` stream: DAG events (task states an advance wrote, the DAG run's status) and
 * the run events of its task runs (their own transitions, which carry `dagRunId`), merged into one
 * async iterator as run-stream.ts does for runs: the bus subscriptions live as long as the
 * iterator, and past `maxBuffered` pending events the oldest are dropped (`dagRun` re-reads state).
 */
import type { RunEvents } from "../core/index.js";
import type { DagEvent, DagEvents } from "../dag/index.js";
import type { DagRunEvent } from "../schema/index.js";
import { dagEventOf, dagEventOfRun } from "./dag-mappers.js";

export interface DagStreamFilter {
  /** The caller may see this owner's DAG runs. */
  visible: (ownerId: string) => boolean;
  dagId: string | null;
  dagRunId: string | null;
}

export function dagStream(runEvents: RunEvents, dagEvents: DagEvents, f: DagStreamFilter, maxBuffered = 5_000): AsyncIterableIterator<DagRunEvent> {
  const buffer: DagRunEvent[] = [];
  let waiting: ((r: IteratorResult<DagRunEvent>) => void) | null = null;
  let done = false;
  const push = (e: DagRunEvent) => {
    if (done) return;
    if (waiting) {
      const w = waiting;
      waiting = null;
      w({ value: e, done: false });
      return;
    }
    buffer.push(e);
    if (buffer.length > maxBuffered) buffer.shift();
  };
  const matches = (ownerId: string, dagId: string, dagRunId: string) =>
    f.visible(ownerId) && (!f.dagId || f.dagId === dagId) && (!f.dagRunId || f.dagRunId === dagRunId);
  const subscriptions = Promise.all([
    dagEvents.subscribe((e: DagEvent) => {
      if (matches(e.ownerId, e.dagId, e.dagRunId)) push(dagEventOf(e));
    }),
    runEvents.subscribe((run) => {
      // A DAG task's run has the DAG's id as its jobId.
      if (run.dagRunId && run.taskKey && matches(run.ownerId, run.jobId, run.dagRunId)) push(dagEventOfRun(run, run.jobId));
    }),
  ]);

  const finish = async (): Promise<IteratorResult<DagRunEvent>> => {
    if (!done) {
      done = true;
      waiting?.({ value: undefined, done: true });
      waiting = null;
      for (const unsubscribe of await subscriptions) await unsubscribe();
    }
    return { value: undefined, done: true };
  };

  return {
    async next() {
      await subscriptions;
      if (buffer.length > 0) return { value: buffer.shift()!, done: false };
      if (done) return { value: undefined, done: true };
      return new Promise<IteratorResult<DagRunEvent>>((resolve) => (waiting = resolve));
    },
    return: finish,
    throw: async (e?: unknown) => {
      await finish();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * DAG run events on the event bus (Channels.dagEvents), so a `dagRunUpdated` subscriber on any API
 * instance sees every change: a task's state written by an advance (including states no run has,
 * UPSTREAM_FAILED, SKIPPED, CANCELLED before start) and the DAG run's status. Task runs' own
 * transitions (QUEUED → RUNNING …) come from the run events, which carry `dagRunId`.
 */
import type { DagRunStatus, DagTaskState, RunStatus } from "../../domain/index.js";
import { Channels, type EventBus, type Unsubscribe } from "../../shared-state/index.js";

export interface DagEvent {
  dagRunId: string;
  dagId: string;
  ownerId: string;
  /** The DAG run's status after the change. */
  status: DagRunStatus;
  /** The task instance that changed; null for a change of the DAG run alone. */
  task: {
    key: string;
    mapIndex: number | null;
    state: DagTaskState;
    attempt: number;
    /** The run's status when the event comes from the run itself. */
    runStatus: RunStatus | null;
    runId: string | null;
  } | null;
  at: number;
}

export class DagEvents {
  constructor(private readonly bus: EventBus) {}

  async publish(events: readonly DagEvent[]): Promise<void> {
    if (events.length === 0) return;
    // Large fan-outs: a few messages of at most 500 events each.
    for (let i = 0; i < events.length; i += 500) await this.bus.publish(Channels.dagEvents, JSON.stringify(events.slice(i, i + 500)));
  }

  subscribe(handler: (event: DagEvent) => void): Promise<Unsubscribe> {
    return this.bus.subscribe(Channels.dagEvents, (msg) => {
      for (const e of JSON.parse(msg) as DagEvent[]) handler(e);
    });
  }
}

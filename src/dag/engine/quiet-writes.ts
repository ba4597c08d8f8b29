/**
 * Successes that decide nothing but their own state (src/dag/plan/quiet-ends.ts), recorded with
 * one conditional write instead of an advance's round: a mapped instance's success while other
 * instances of its task are under way, and the success of a task whose children all wait for their
 * last parent, while each still waits for another. The successes one process reports in one
 * event-loop turn share one write (recordQuietSuccesses, whose filter holds the premise), with no
 * read of the DAG run and no compare-and-set: the 1,000 ends of a fan-out are a few dozen small
 * writes rather than rounds that read and rewrite 1,000 states, and the last end (a round: it
 * starts the join) does not queue behind them. When a condition does not hold (the last instance
 * or parent among them, a cancel, maxParallel ...), they go to the advance together (`fallback`).
 */
import { coerceError, dagAttemptOfFireKey, DagRunStatus, DagTaskState as S } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import { recordQuietSuccesses, type DagTaskRun, type Mongo, type QuietSuccess } from "../../store/index.js";
import type { DagEvent, DagEvents } from "./events.js";

/** DAG runs whose quiet successes a process remembers (those it advanced last). */
const QUIET_RUNS = 1024;

export interface QuietWritesDeps {
  mongo: Mongo;
  clock: Clock;
  log: Logger;
  events: DagEvents;
  sweepAfterMs: number;
  /** Ends whose quiet write did not apply: the advance records them (a light round). */
  fallback: (dagRunId: string, runs: DagTaskRun[]) => Promise<void>;
}

type Batch = { ends: Map<string, { run: DagTaskRun; quiet: QuietSuccess }>; done: Promise<void> };

export class QuietWrites {
  /** Quiet successes reported in this event-loop turn, by DAG run. */
  private readonly batches = new Map<string, Batch>();
  /**
   * By DAG run this process advanced lately: the tasks whose success can be quiet, and the children
   * whose counts it lowers (quietSuccessChildren). Learned from the definition in each round.
   */
  private readonly children = new Map<string, ReadonlyMap<string, readonly string[]>>();

  constructor(private readonly deps: QuietWritesDeps) {}

  /** Remembers which successes of the DAG run's tasks can be quiet (a bounded number of DAG runs, the least recent out). */
  learn(dagRunId: string, quiet: ReadonlyMap<string, readonly string[]>): void {
    this.children.delete(dagRunId);
    if (this.children.size >= QUIET_RUNS) this.children.delete(this.children.keys().next().value!);
    this.children.set(dagRunId, quiet);
  }

  /** The DAG run ended: nothing of it is quiet any more. */
  forget(dagRunId: string): void {
    this.children.delete(dagRunId);
  }

  /**
   * Takes `ended` into this turn's write when it may be a quiet success: a mapped instance's
   * success, or a task's whose success can be quiet in the DAG's graph as this process last
   * advanced that DAG run (none known: not taken). False: the advance must record it.
   */
  take(dagRunId: string, ended: DagTaskRun): boolean {
    const quiet = this.quietOf(dagRunId, ended);
    if (!quiet) return false;
    let batch = this.batches.get(dagRunId);
    if (!batch) {
      const ends: Batch["ends"] = new Map();
      const done = new Promise<void>((resolve) =>
        setImmediate(() => {
          this.batches.delete(dagRunId);
          resolve(this.write(dagRunId, [...ends.values()]));
        }),
      );
      batch = { ends, done };
      this.batches.set(dagRunId, batch);
    }
    batch.ends.set(ended.fireKey, { run: ended, quiet });
    return true;
  }

  /** Whether `take` would take `ended` now (a success that may be quiet). */
  wouldTake(dagRunId: string, ended: DagTaskRun): boolean {
    return this.quietOf(dagRunId, ended) !== null;
  }

  /** Resolves once this turn's write for the DAG run (or its fallback) is done. */
  written(dagRunId: string): Promise<void> {
    return this.batches.get(dagRunId)?.done ?? Promise.resolve();
  }

  /** Writes in progress (shutdown waits for them). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.batches.values()].map((b) => b.done));
  }

  private quietOf(dagRunId: string, ended: DagTaskRun): QuietSuccess | null {
    if (ended.status !== "SUCCEEDED" || !ended.taskKey) return null;
    const attempt = dagAttemptOfFireKey(ended.fireKey);
    if (attempt === null) return null;
    if (ended.mapIndex != null) return { taskKey: ended.taskKey, mapIndex: ended.mapIndex, attempt };
    const children = this.children.get(dagRunId)?.get(ended.taskKey) ?? null;
    return children ? { taskKey: ended.taskKey, mapIndex: null, attempt, children } : null;
  }

  private async write(dagRunId: string, ends: Array<{ run: DagTaskRun; quiet: QuietSuccess }>): Promise<void> {
    const now = this.deps.clock();
    const successes = ends.map((e) => e.quiet);
    const written = await recordQuietSuccesses(this.deps.mongo, dagRunId, successes, { now: new Date(now), sweepAt: new Date(now + this.deps.sweepAfterMs) }).catch((e: unknown) => {
      this.deps.log.warn({ err: coerceError(e), dagRunId }, "could not record DAG task successes in one write; advancing the DAG run instead");
      return null;
    });
    if (!written) return this.deps.fallback(dagRunId, ends.map((e) => e.run));
    const base = { dagRunId, dagId: written.dagId, ownerId: written.ownerId, status: DagRunStatus.RUNNING, at: now };
    const events: DagEvent[] = [];
    // A mapped task stays RUNNING (its task-level event, once per task); a task's own success is its event.
    for (const key of new Set(successes.filter((s) => s.mapIndex !== null).map((s) => s.taskKey))) {
      events.push({ ...base, task: { key, mapIndex: null, state: S.RUNNING, attempt: successes.find((s) => s.taskKey === key)!.attempt, runStatus: null, runId: null } });
    }
    for (const s of successes) events.push({ ...base, task: { key: s.taskKey, mapIndex: s.mapIndex, state: S.SUCCEEDED, attempt: s.attempt, runStatus: null, runId: null } });
    await this.deps.events.publish(events).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e) }, "could not publish DAG events"));
  }
}

/**
 * The identity of a task instance's run: `<dagRunId>:<taskKey>[:<mapIndex>]#<attempt>`. It is the
 * run's fireKey (unique index), so creating the run of an instance twice (two parents finishing
 * at once, a sweep after a crash) creates it once. `attempt` is the instance's attempt in the DAG
 * run (retryDagRun bumps it), not the run's own retry attempt.
 */
export function instanceFireKey(dagRunId: string, key: string, index: number | null, attempt: number): string {
  return `${dagRunId}:${key}${index === null ? "" : `:${index}`}#${attempt}`;
}

/** The instance's attempt in its DAG run, from its run's fire key (null: not a task instance's key). */
export function dagAttemptOfFireKey(fireKey: string): number | null {
  const m = /#(\d+)$/.exec(fireKey);
  return m ? Number(m[1]) : null;
}

/** A trigger's or a backfill's DAG run key: `dagId@manual:<unique>` (a schedule slot's is `dagId@<ms>`). */
export function manualDagRunKey(dagId: string, unique: string): string {
  return `${dagId}@manual:${unique}`;
}

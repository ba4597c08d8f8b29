/**
 * Retention of DAG definitions (scheduler role). Finished DAG runs expire with the run retention
 * (a TTL index, src/store/retention.ts); the definition of a DAG version (up to ~2 MiB, stored once
 * and shared by its DAG runs) goes once nothing may read it any more: no DAG run of that version
 * is left and it is not its DAG's current version (or its DAG was deleted). A definition found so
 * is first marked retired, and deleted by a pass at least `graceMs` later if still unused: a
 * trigger that read the DAG just before an `updateDag` or `deleteDag` inserts a DAG run of the
 * version it read within that grace, taking the definition as stored. Passes walk the definitions
 * in id order, a batch each, and start over at the end; several schedulers may sweep at once
 * (every step is conditional and idempotent).
 */
import type { Clock } from "../../shared-state/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { dagDefinitionInUse, deleteRetiredDagDefinition, listDagDefinitionsAfter, retireDagDefinition, unretireDagDefinition, type Mongo } from "../../store/index.js";

export interface DefinitionRetentionOptions {
  /** How often a pass runs. @default 10 min */
  everyMs: number;
  /** Definitions looked at per pass. @default 200 */
  batch: number;
  /** How long a definition stays marked unused before it is deleted. @default 1 h */
  graceMs: number;
}

export interface RetentionPass {
  retired: number;
  deleted: number;
}

export class DefinitionRetention {
  private readonly periodic: Periodic;
  /** The last definition id the previous pass looked at (null: start from the first). */
  private cursor: string | null = null;

  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger },
    private readonly opts: DefinitionRetentionOptions,
  ) {
    this.periodic = new Periodic(() => this.sweepOnce(), { everyMs: opts.everyMs, log: deps.log, failure: "DAG definition retention pass failed; the next pass retries" });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over the next batch of definitions: unused ones marked, those marked a grace ago and still unused deleted. */
  async sweepOnce(): Promise<RetentionPass> {
    const { mongo, clock } = this.deps;
    const batch = await listDagDefinitionsAfter(mongo, this.cursor, this.opts.batch);
    this.cursor = batch.length < this.opts.batch ? null : batch[batch.length - 1]!._id;
    const out: RetentionPass = { retired: 0, deleted: 0 };
    for (const d of batch) {
      const now = clock();
      if (await dagDefinitionInUse(mongo, d)) {
        if (d.retiredAt) await unretireDagDefinition(mongo, d._id);
      } else if (!d.retiredAt) {
        await retireDagDefinition(mongo, d._id, new Date(now));
        out.retired++;
      } else if (d.retiredAt.getTime() <= now - this.opts.graceMs && (await deleteRetiredDagDefinition(mongo, d._id, d.retiredAt))) {
        out.deleted++;
      }
    }
    if (out.deleted) this.deps.log.info({ deleted: out.deleted }, "deleted DAG definitions no DAG run reads any more");
    return out;
  }
}

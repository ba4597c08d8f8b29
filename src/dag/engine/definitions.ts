/**
 * DAG definitions by version, read once per process: a version never changes (`updateDag` makes
 * the next), so a DAG run's definition, and a DAG's at its current version, are read from the
 * store the first time only. One cache for the advance, triggers, backfills and schedule fires.
 */
import type { DagDefinitionSnapshot, DagDoc, DagRunDoc } from "../../domain/index.js";
import { dagDefinitionId } from "../../domain/index.js";
import { findDag, findDagDefinition, findDagHead, findDagRunDefinition, type Mongo } from "../../store/index.js";

/** Definitions kept per process, by DAG version (up to 1,000 task specs each). */
const DEFINITION_CACHE = 64;

export class DagDefinitions {
  /** By `<dagId>@<version>`; a miss (not stored yet, a failed read) is not kept. */
  private readonly cache = new Map<string, Promise<DagDefinitionSnapshot | null>>();

  constructor(private readonly mongo: Mongo) {}

  /** The definition a DAG run runs (its version's, or an older DAG run's own copy). */
  forRun(run: Pick<DagRunDoc, "_id" | "dagId" | "dagVersion">): Promise<DagDefinitionSnapshot | null> {
    return this.cached(dagDefinitionId(run.dagId, run.dagVersion), () => findDagRunDefinition(this.mongo, run));
  }

  /**
   * The DAG whole, its tasks taken from its version's definition when that is known (read by id
   * without its tasks, then the definition from this cache): a trigger or a fire of a 1,000-task
   * DAG does not read 1,000 task specs each time. Before its version's first DAG run (nothing
   * stored yet) it is read whole, as it is. Null when it does not exist.
   */
  async dag(dagId: string): Promise<DagDoc | null> {
    const head = await findDagHead(this.mongo, dagId);
    if (!head) return null;
    const definition = await this.cached(dagDefinitionId(dagId, head.version), () => findDagDefinition(this.mongo, dagId, head.version));
    // A version's definition holds the fields that make it (tasks, failFast, maxParallel).
    if (definition) return { ...head, ...definition };
    return findDag(this.mongo, dagId);
  }

  private cached(key: string, read: () => Promise<DagDefinitionSnapshot | null>): Promise<DagDefinitionSnapshot | null> {
    let d = this.cache.get(key);
    if (!d) {
      d = read();
      if (this.cache.size >= DEFINITION_CACHE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, d);
      d.then((v) => v ?? this.cache.delete(key), () => this.cache.delete(key));
    }
    return d;
  }
}

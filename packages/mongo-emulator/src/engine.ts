/**
 * The catalog: databases → collections, plus server-wide state (cursors, counters). All data
 * lives in memory; persistence.ts observes committed changes through the `journal` hook.
 */
import type { Binary } from "bson";
import { Collection, type CollectionHooks, type DocumentCounts } from "./collection.js";
import { CursorRegistry } from "./cursors.js";
import { commandError } from "./errors.js";
import type { Doc } from "./values.js";

export interface EngineStats {
  /** Documents tested against a filter since start: lets tests prove a lookup did not scan. */
  docsExamined: number;
  opcounters: { insert: number; query: number; update: number; delete: number; getmore: number; command: number };
  /** Documents inserted, changed by an update (not merely matched) and deleted (TTL included). */
  documents: DocumentCounts;
  /** Documents written (inserted, changed, deleted) per namespace: serverStatus.kairosEmulator.documentsWritten. */
  writtenByNs: Map<string, number>;
  ttlDeleted: number;
}

const DB_NAME_FORBIDDEN = /[/\\. "$\0]/;

export function validateDbName(db: string): void {
  if (db.length === 0 || db.length >= 64 || DB_NAME_FORBIDDEN.test(db)) {
    throw commandError("InvalidNamespace", `Invalid database name: '${db}'`);
  }
}

export function validateCollectionName(db: string, name: string): void {
  if (name.length === 0 || name.includes("$") || name.includes("\0") || name.startsWith(".") || name.startsWith("system.")) {
    throw commandError("InvalidNamespace", `Invalid collection name: '${db}.${name}'`);
  }
  if (db.length + 1 + name.length > 255) throw commandError("InvalidNamespace", `Fully qualified namespace is too long: ${db}.${name}`);
}

export class Engine {
  readonly dbs = new Map<string, Map<string, Collection>>();
  readonly cursors = new CursorRegistry();
  readonly stats: EngineStats = {
    docsExamined: 0,
    opcounters: { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 },
    documents: { inserted: 0, updated: 0, deleted: 0 },
    writtenByNs: new Map(),
    ttlDeleted: 0,
  };
  readonly hooks: CollectionHooks = { journal: null, stats: this.stats };
  readonly startedAt = Date.now();

  collection(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name);
  }

  /** The collection, created implicitly (as on a first write) when missing. */
  ensureCollection(db: string, name: string): Collection {
    return this.collection(db, name) ?? this.createCollection(db, name, {});
  }

  createCollection(db: string, name: string, options: Doc, uuid?: Binary): Collection {
    validateDbName(db);
    validateCollectionName(db, name);
    let colls = this.dbs.get(db);
    if (colls?.has(name)) throw commandError("NamespaceExists", `Collection ${db}.${name} already exists.`);
    if (!colls) this.dbs.set(db, (colls = new Map()));
    const coll = new Collection(db, name, this.hooks, options, uuid);
    colls.set(name, coll);
    this.hooks.journal?.({ o: "cc", ns: coll.ns, options, uuid: coll.uuid });
    return coll;
  }

  dropCollection(db: string, name: string): Collection | undefined {
    const colls = this.dbs.get(db);
    const coll = colls?.get(name);
    if (!colls || !coll) return undefined;
    colls.delete(name);
    if (colls.size === 0) this.dbs.delete(db);
    this.cursors.killNamespace(coll.ns);
    this.hooks.journal?.({ o: "dc", ns: coll.ns });
    return coll;
  }

  dropDatabase(db: string): void {
    const colls = this.dbs.get(db);
    if (!colls) return;
    for (const coll of colls.values()) this.cursors.killNamespace(coll.ns);
    this.dbs.delete(db);
    this.hooks.journal?.({ o: "dd", db });
  }

  *allCollections(): Generator<Collection> {
    for (const colls of this.dbs.values()) yield* colls.values();
  }

  /**
   * The TTL monitor: deletes documents whose TTL-indexed date is older than expireAfterSeconds
   * (for an array of dates the earliest counts; non-date values never expire), as MongoDB does.
   */
  sweepTtl(nowMs: number): number {
    let removed = 0;
    for (const coll of [...this.allCollections()]) removed += coll.expire(nowMs);
    this.stats.ttlDeleted += removed;
    return removed;
  }
}

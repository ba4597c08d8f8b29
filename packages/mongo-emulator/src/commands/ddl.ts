/**
 * Collections, databases and indexes: create, drop, dropDatabase, listCollections,
 * createIndexes, listIndexes, dropIndexes, dbStats, collStats.
 */
import { BSON } from "bson";
import type { Collection } from "../collection.js";
import { CommandError, commandError } from "../errors.js";
import type { IndexSpec } from "../indexes.js";
import { mingoQuery } from "../matcher.js";
import { isNumeric, isPlainObject, toNumber, toView, type Doc } from "../values.js";
import { collectionArg, optArray, optBool, optDoc, optInt, type CommandContext, type CommandSpec } from "./context.js";
import { cursorReply } from "./read.js";

const UNSUPPORTED_INDEX_TYPES = new Set(["text", "2d", "2dsphere", "geoHaystack", "columnstore"]);
const INDEX_FIELDS = new Set(["key", "name", "unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "background", "v", "hidden", "ns", "storageEngine"]);
const UNSUPPORTED_INDEX_FIELDS = new Set(["collation", "weights", "default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max", "wildcardProjection", "clustered", "prepareUnique"]);

function parseIndexSpec(raw: unknown): IndexSpec {
  if (!isPlainObject(raw)) throw commandError("TypeMismatch", "each index specification must be an object");
  for (const k of Object.keys(raw)) {
    if (UNSUPPORTED_INDEX_FIELDS.has(k)) throw commandError("CannotCreateIndex", `index option '${k}' is not supported by the Kairos emulator`);
    if (!INDEX_FIELDS.has(k)) throw new CommandError(197, `The field '${k}' is not valid for an index specification. Specification: ${JSON.stringify(raw)}`);
  }
  const key = raw.key;
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw commandError("CannotCreateIndex", "Index keys cannot be an empty field.");
  }
  let hashed = false;
  for (const [field, dir] of Object.entries(key)) {
    if (field.length === 0 || field.startsWith("$")) {
      if (field === "$**" || field.endsWith(".$**")) throw commandError("CannotCreateIndex", "wildcard indexes are not supported by the Kairos emulator");
      throw commandError("CannotCreateIndex", `Index key contains an illegal field name: ${field}`);
    }
    if (field.endsWith("$**")) throw commandError("CannotCreateIndex", "wildcard indexes are not supported by the Kairos emulator");
    if (typeof dir === "string") {
      if (dir === "hashed") {
        hashed = true;
        continue;
      }
      if (UNSUPPORTED_INDEX_TYPES.has(dir)) throw commandError("CannotCreateIndex", `index type '${dir}' is not supported by the Kairos emulator`);
      throw commandError("CannotCreateIndex", `Unknown index plugin '${dir}'`);
    }
    if (!isNumeric(dir) || toNumber(dir) === 0 || !Number.isFinite(toNumber(dir))) {
      throw commandError("CannotCreateIndex", `Values in the index key pattern can only be non-zero numbers or strings, found ${field}: ${String(dir)}`);
    }
  }
  const name = raw.name;
  if (typeof name !== "string" || name.length === 0) {
    throw commandError("FailedToParse", `Error in specification ${JSON.stringify(raw)} :: caused by :: The 'name' field is a required property of an index specification`);
  }
  const spec: IndexSpec = { v: 2, key, name };
  if (raw.unique === true || (isNumeric(raw.unique) && toNumber(raw.unique) !== 0)) {
    if (hashed) throw commandError("CannotCreateIndex", "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.");
    spec.unique = true;
  }
  if (raw.sparse === true || (isNumeric(raw.sparse) && toNumber(raw.sparse) !== 0)) spec.sparse = true;
  if (raw.partialFilterExpression !== undefined) {
    if (!isPlainObject(raw.partialFilterExpression)) throw commandError("TypeMismatch", "partialFilterExpression must be an object");
    if (spec.sparse) throw commandError("CannotCreateIndex", "cannot mix \"partialFilterExpression\" and \"sparse\" options");
    mingoQuery(toView(raw.partialFilterExpression)); // validates
    spec.partialFilterExpression = raw.partialFilterExpression;
  }
  if (raw.expireAfterSeconds !== undefined) {
    const s = raw.expireAfterSeconds;
    if (!isNumeric(s) || toNumber(s) < 0 || !Number.isFinite(toNumber(s))) {
      throw commandError("CannotCreateIndex", `TTL index 'expireAfterSeconds' option must be numeric and non-negative, but received: ${String(s)}`);
    }
    if (Object.keys(key).length !== 1) throw commandError("CannotCreateIndex", "TTL indexes are single-field indexes, compound indexes do not support TTL");
    spec.expireAfterSeconds = Math.trunc(toNumber(s));
  }
  return spec;
}

const createIndexes: CommandSpec = {
  write: true,
  fields: ["createIndexes", "indexes", "commitQuorum"],
  run(ctx) {
    const name = collectionArg(ctx);
    const raw = optArray(ctx, "indexes");
    if (!raw || raw.length === 0) throw commandError("BadValue", "Must specify at least one index to create");
    const specs = raw.map(parseIndexSpec);
    const existed = ctx.engine.collection(ctx.db, name) !== undefined;
    const coll = ctx.engine.ensureCollection(ctx.db, name);
    const before = coll.indexes.length + 1;
    const created: IndexSpec[] = [];
    try {
      for (const spec of specs) if (coll.createIndex(spec)) created.push(spec);
    } catch (e) {
      // All-or-nothing, like MongoDB: drop what this command had already built.
      for (const spec of created) {
        const ix = coll.findIndex(spec.name);
        if (ix) coll.dropIndex(ix);
      }
      throw e;
    }
    const reply: Doc = { numIndexesBefore: before, numIndexesAfter: coll.indexes.length + 1, createdCollectionAutomatically: !existed };
    if (created.length === 0) reply.note = "all indexes already exist";
    reply.ok = 1;
    return reply;
  },
};

function requireCollection(ctx: CommandContext, name: string, message: string): Collection {
  const coll = ctx.engine.collection(ctx.db, name);
  if (!coll) throw commandError("NamespaceNotFound", `${message} ${ctx.db}.${name}`);
  return coll;
}

const listIndexes: CommandSpec = {
  fields: ["listIndexes", "cursor"],
  run(ctx) {
    const name = collectionArg(ctx);
    const coll = requireCollection(ctx, name, "ns does not exist:");
    const batchSize = optInt(ctx, "batchSize", optDoc(ctx, "cursor") ?? {});
    return cursorReply(ctx, coll.ns, coll.indexSpecs() as unknown as Doc[], batchSize, null);
  },
};

const dropIndexes: CommandSpec = {
  write: true,
  fields: ["dropIndexes", "deleteIndexes", "index"],
  run(ctx) {
    const name = collectionArg(ctx);
    const coll = requireCollection(ctx, name, "ns not found");
    const target = ctx.body.index;
    const nIndexesWas = coll.indexes.length + 1;
    if (target === "*") {
      for (const ix of [...coll.indexes]) coll.dropIndex(ix);
      return { nIndexesWas, msg: "non-_id indexes dropped for collection", ok: 1 };
    }
    const targets = Array.isArray(target) ? target : [target];
    const found = targets.map((t) => {
      if (t === "_id_" || (isPlainObject(t) && Object.keys(t).length === 1 && "_id" in t)) {
        throw commandError("InvalidOptions", "cannot drop _id index");
      }
      if (typeof t !== "string" && !isPlainObject(t)) {
        throw commandError("TypeMismatch", "BSON field 'dropIndexes.index' must be a string, an array of strings or an object");
      }
      const ix = coll.findIndex(t);
      if (!ix) {
        throw commandError("IndexNotFound", typeof t === "string" ? `index not found with name [${t}]` : `can't find index with key: ${JSON.stringify(t)}`);
      }
      return ix;
    });
    for (const ix of found) coll.dropIndex(ix);
    return { nIndexesWas, ok: 1 };
  },
};

const create: CommandSpec = {
  write: true,
  fields: ["create", "storageEngine", "indexOptionDefaults", "capped", "validator", "validationLevel", "validationAction"],
  unsupported: ["viewOn", "pipeline", "collation", "timeseries", "clusteredIndex", "changeStreamPreAndPostImages", "expireAfterSeconds", "size", "max", "encryptedFields", "autoIndexId", "idIndex"],
  run(ctx) {
    const name = collectionArg(ctx);
    if (optBool(ctx, "capped")) throw commandError("BadValue", "option 'create.capped' is not supported by the Kairos emulator");
    const validator = optDoc(ctx, "validator");
    if (validator && Object.keys(validator).length > 0) throw commandError("BadValue", "option 'create.validator' is not supported by the Kairos emulator");
    ctx.engine.createCollection(ctx.db, name, {});
    return { ok: 1 };
  },
};

const drop: CommandSpec = {
  write: true,
  fields: ["drop"],
  run(ctx) {
    const name = collectionArg(ctx);
    const coll = ctx.engine.dropCollection(ctx.db, name);
    // Since MongoDB 7.0 dropping a missing collection succeeds (earlier: NamespaceNotFound).
    if (!coll) return { ok: 1 };
    return { nIndexesWas: coll.indexes.length + 1, ns: coll.ns, ok: 1 };
  },
};

const dropDatabase: CommandSpec = {
  write: true,
  fields: ["dropDatabase"],
  run(ctx) {
    ctx.engine.dropDatabase(ctx.db);
    return { dropped: ctx.db, ok: 1 };
  },
};

function collectionInfo(coll: Collection, nameOnly: boolean): Doc {
  if (nameOnly) return { name: coll.name, type: "collection" };
  return {
    name: coll.name,
    type: "collection",
    options: coll.options,
    info: { readOnly: false, uuid: coll.uuid },
    idIndex: { v: 2, key: { _id: 1 }, name: "_id_" },
  };
}

const listCollections: CommandSpec = {
  fields: ["listCollections", "filter", "nameOnly", "authorizedCollections", "cursor", "includePendingDrops"],
  run(ctx) {
    const filter = optDoc(ctx, "filter");
    const nameOnly = optBool(ctx, "nameOnly") ?? false;
    const colls = [...(ctx.engine.dbs.get(ctx.db)?.values() ?? [])];
    let infos = colls.map((c) => collectionInfo(c, false));
    if (filter && Object.keys(filter).length > 0) {
      const q = mingoQuery(toView(filter));
      infos = infos.filter((i) => q.test(toView(i)));
    }
    if (nameOnly) infos = infos.map((i) => ({ name: i.name, type: i.type }));
    const batchSize = optInt(ctx, "batchSize", optDoc(ctx, "cursor") ?? {});
    return cursorReply(ctx, `${ctx.db}.$cmd.listCollections`, infos, batchSize, null);
  },
};

function sizeOf(coll: Collection): number {
  let bytes = 0;
  for (const rec of coll.docs.values()) bytes += BSON.calculateObjectSize(rec.doc);
  return bytes;
}

const dbStats: CommandSpec = {
  fields: ["dbStats", "scale", "freeStorage"],
  run(ctx) {
    const colls = [...(ctx.engine.dbs.get(ctx.db)?.values() ?? [])];
    let objects = 0;
    let dataSize = 0;
    let indexes = 0;
    for (const c of colls) {
      objects += c.docs.size;
      dataSize += sizeOf(c);
      indexes += c.indexes.length + 1;
    }
    return {
      db: ctx.db,
      collections: colls.length,
      views: 0,
      objects,
      avgObjSize: objects ? dataSize / objects : 0,
      dataSize,
      storageSize: dataSize,
      indexes,
      indexSize: 0,
      totalSize: dataSize,
      scaleFactor: 1,
      ok: 1,
    };
  },
};

const collStats: CommandSpec = {
  fields: ["collStats", "scale"],
  run(ctx) {
    const name = collectionArg(ctx);
    const coll = requireCollection(ctx, name, "ns not found");
    const size = sizeOf(coll);
    const indexSizes: Doc = {};
    for (const spec of coll.indexSpecs()) indexSizes[spec.name] = 0;
    return {
      ns: coll.ns,
      count: coll.docs.size,
      size,
      avgObjSize: coll.docs.size ? size / coll.docs.size : 0,
      storageSize: size,
      nindexes: coll.indexes.length + 1,
      totalIndexSize: 0,
      indexSizes,
      capped: false,
      ok: 1,
    };
  },
};

export const ddlCommands: Record<string, CommandSpec> = {
  createIndexes,
  listIndexes,
  dropIndexes,
  deleteIndexes: dropIndexes,
  create,
  drop,
  dropDatabase,
  listCollections,
  dbStats,
  dbstats: dbStats,
  collStats,
  collstats: collStats,
};


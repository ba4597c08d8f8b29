/**
 * Handshake and administrative commands: what the driver sends while connecting, monitoring and
 * closing (hello, ping, buildInfo, endSessions ...) plus serverStatus and listDatabases.
 *
 * Topology: the emulator presents itself as a standalone MongoDB 7.0 (maxWireVersion 21, no
 * setName). It advertises logicalSessionTimeoutMinutes, as a real standalone does, so explicit
 * driver sessions work; transactions are refused per command (IllegalOperation) exactly as a
 * standalone refuses them, and the driver never uses retryable writes against a standalone.
 * `topologyVersion` is omitted, so the driver monitors by polling hello instead of the streaming
 * (exhaust) protocol, which the emulator does not implement.
 */
import { BSON } from "bson";
import { cpus, hostname, totalmem, arch, release } from "node:os";
import { commandError } from "../errors.js";
import { MAX_BSON_SIZE, MAX_MESSAGE_SIZE } from "../wire.js";
import { isPlainObject, type Doc } from "../values.js";
import { mingoQuery } from "../matcher.js";
import type { CommandContext, CommandSpec } from "./context.js";

export const SERVER_VERSION = "7.0.0";
export const MAX_WIRE_VERSION = 21;

function hello(legacy: boolean): CommandSpec {
  return {
    run(ctx) {
      if (ctx.conn.client === null && isPlainObject(ctx.body.client)) ctx.conn.client = ctx.body.client;
      const reply: Doc = {
        [legacy ? "ismaster" : "isWritablePrimary"]: true,
        maxBsonObjectSize: MAX_BSON_SIZE,
        maxMessageSizeBytes: MAX_MESSAGE_SIZE,
        maxWriteBatchSize: 100_000,
        localTime: new Date(ctx.now.getTime()),
        logicalSessionTimeoutMinutes: 30,
        connectionId: ctx.conn.id,
        minWireVersion: 0,
        maxWireVersion: MAX_WIRE_VERSION,
        readOnly: false,
      };
      if (ctx.body.helloOk === true) reply.helloOk = true;
      reply.ok = 1;
      return reply;
    },
  };
}

const ok: CommandSpec = { run: () => ({ ok: 1 }) };

const buildInfo: CommandSpec = {
  run: () => ({
    version: SERVER_VERSION,
    gitVersion: "kairos-emulator",
    versionArray: [7, 0, 0, 0],
    modules: [],
    allocator: "system",
    javascriptEngine: "none",
    sysInfo: "deprecated",
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_SIZE,
    storageEngines: ["kairos-memory"],
    openssl: { running: "disabled", compiled: "disabled" },
    kairosEmulator: true,
    ok: 1,
  }),
};

function sizeOfDb(ctx: CommandContext, db: string): number {
  let bytes = 0;
  for (const coll of ctx.engine.dbs.get(db)?.values() ?? []) {
    for (const rec of coll.docs.values()) bytes += BSON.calculateObjectSize(rec.doc);
  }
  return bytes;
}

const listDatabases: CommandSpec = {
  fields: ["listDatabases", "filter", "nameOnly", "authorizedDatabases"],
  run(ctx) {
    const nameOnly = ctx.body.nameOnly === true;
    let dbs: Doc[] = [...ctx.engine.dbs.keys()].sort().map((name) => (nameOnly ? { name } : { name, sizeOnDisk: sizeOfDb(ctx, name), empty: false }));
    const filter = ctx.body.filter;
    if (isPlainObject(filter) && Object.keys(filter).length > 0) {
      const q = mingoQuery(filter);
      dbs = dbs.filter((d) => q.test(d));
    }
    if (nameOnly) return { databases: dbs, ok: 1 };
    const totalSize = dbs.reduce((s, d) => s + (d.sizeOnDisk as number), 0);
    return { databases: dbs, totalSize, totalSizeMb: Math.floor(totalSize / 1048576), ok: 1 };
  },
};

const serverStatus: CommandSpec = {
  run(ctx) {
    const s = ctx.engine.stats;
    return {
      host: `${ctx.server.host}:${ctx.server.port}`,
      version: SERVER_VERSION,
      process: "kairos-emulator",
      pid: process.pid,
      uptime: Math.floor((ctx.now.getTime() - ctx.server.startedAt) / 1000),
      uptimeMillis: ctx.now.getTime() - ctx.server.startedAt,
      localTime: new Date(ctx.now.getTime()),
      connections: ctx.server.connections(),
      opcounters: { ...s.opcounters },
      metrics: { document: { ...s.documents } },
      mem: { resident: Math.round(process.memoryUsage().rss / 1048576), bits: 64 },
      kairosEmulator: {
        docsExamined: s.docsExamined,
        openCursors: ctx.engine.cursors.size,
        ttlDeleted: s.ttlDeleted,
        documentsWritten: Object.fromEntries(s.writtenByNs),
        durable: ctx.server.durable,
      },
      ok: 1,
    };
  },
};

const KNOWN_PARAMETERS: Doc = {
  featureCompatibilityVersion: { version: "7.0" },
  authenticationMechanisms: [],
  maxBSONDepth: 100,
  internalQueryMaxBlockingSortMemoryUsageBytes: 100 * 1024 * 1024,
};

const getParameter: CommandSpec = {
  run(ctx) {
    const all = ctx.body.getParameter === "*";
    const reply: Doc = {};
    for (const [k, v] of Object.entries(KNOWN_PARAMETERS)) if (all || k in ctx.body) reply[k] = v;
    if (Object.keys(reply).length === 0) throw commandError("InvalidOptions", "no option found to get");
    reply.ok = 1;
    return reply;
  },
};

const getLog: CommandSpec = {
  run(ctx) {
    if (ctx.body.getLog === "*") return { names: ["global", "startupWarnings"], ok: 1 };
    return { totalLinesWritten: 0, log: [], ok: 1 };
  },
};

const hostInfo: CommandSpec = {
  run: (ctx) => ({
    system: {
      currentTime: new Date(ctx.now.getTime()),
      hostname: hostname(),
      cpuAddrSize: 64,
      memSizeMB: Math.round(totalmem() / 1048576),
      numCores: cpus().length,
      cpuArch: arch(),
      numaEnabled: false,
    },
    os: { type: process.platform === "linux" ? "Linux" : process.platform, name: process.platform, version: release() },
    extra: {},
    ok: 1,
  }),
};

const authRefused: CommandSpec = {
  run() {
    throw commandError("AuthenticationFailed", "Authentication is not supported by the Kairos emulator; connect without credentials");
  },
};

const transactionRefused: CommandSpec = {
  run() {
    throw commandError("IllegalOperation", "Transaction numbers are only allowed on a replica set member or mongos");
  },
};

export function adminCommands(names: () => string[]): Record<string, CommandSpec> {
  return {
    hello: hello(false),
    isMaster: hello(true),
    ismaster: hello(true),
    ping: ok,
    buildInfo,
    buildinfo: buildInfo,
    listDatabases,
    serverStatus,
    endSessions: ok,
    refreshSessions: ok,
    killSessions: ok,
    killAllSessions: ok,
    getParameter,
    getLog,
    hostInfo,
    whatsmyuri: { run: (ctx) => ({ you: ctx.conn.remote, ok: 1 }) },
    getCmdLineOpts: { run: (ctx) => ({ argv: process.argv.slice(1), parsed: { net: { bindIp: ctx.server.host, port: ctx.server.port } }, ok: 1 }) },
    connectionStatus: { run: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }) },
    listCommands: {
      run: () => ({ commands: Object.fromEntries(names().map((n) => [n, { help: "", adminOnly: false, requiresAuth: false }])), ok: 1 }),
    },
    replSetGetStatus: {
      run() {
        throw commandError("NoReplicationEnabled", "not running with --replSet");
      },
    },
    saslStart: authRefused,
    saslContinue: authRefused,
    authenticate: authRefused,
    logout: ok,
    commitTransaction: transactionRefused,
    abortTransaction: transactionRefused,
  };
}

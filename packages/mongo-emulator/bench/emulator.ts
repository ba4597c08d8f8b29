/**
 * Emulator throughput. The server runs in its own process (as in real use); the clients run here.
 *   node --import tsx packages/mongo-emulator/bench/emulator.ts [--seconds N] [--clients N]   (from the repository root)
 * EMULATOR_CPU_PROF=DIR writes a V8 CPU profile of the server process into DIR.
 *
 * Part 1, official driver: N separate MongoClients (maxPoolSize 1), each doing one operation at a
 * time: point inserts/s, point findOneAndUpdate/s (claim-style filter {_id, status}), indexed
 * finds/s (unique fireKey and _id), and the median time of insertMany(1000 run-like documents).
 * CPU use of both processes is reported, which shows which side is the bottleneck.
 *
 * Part 2, server capacity: the same operations as hand-encoded OP_MSG frames over 8 raw sockets
 * with 8 requests in flight each, so the driver's own per-operation cost is out of the picture.
 */
import { Socket } from "node:net";
import { loadavg } from "node:os";
import { BSON, UUID } from "bson";
import { MongoClient, ObjectId, type Collection } from "mongodb";
import { encodeMsgRequest } from "../src/wire.js";
import { arg, processCpuMs, startServer } from "./server.js";

const SECONDS = arg("seconds", 3);
const CLIENTS = arg("clients", 8);
const INSERT_MANY_ROUNDS = 9;
const RAW_CONNECTIONS = 8;
const RAW_IN_FLIGHT = 8;

interface RunDoc {
  _id?: ObjectId;
  fireKey: string;
  jobId: ObjectId;
  ownerId: ObjectId;
  status: string;
  attempt: number;
  fencingToken: number;
  scheduledFor: Date;
  queuedAt: Date;
  createdAt: Date;
  leaseUntil?: Date;
  pool: string;
  resources: { cpu: number; memoryMb: number };
  history: { from: string; to: string; at: Date }[];
}

function runDoc(fireKey: string): RunDoc {
  const now = new Date();
  return {
    fireKey,
    jobId: new ObjectId(),
    ownerId: new ObjectId(),
    status: "QUEUED",
    attempt: 1,
    fencingToken: 0,
    scheduledFor: now,
    queuedAt: now,
    createdAt: now,
    pool: "default",
    resources: { cpu: 0.5, memoryMb: 256 },
    history: [{ from: "PENDING", to: "QUEUED", at: now }],
  };
}

interface Phase {
  opsPerSec: number;
  clientCpuPct: number;
  serverCpuPct: number;
}

/** Runs `op` in `workers` parallel loops for SECONDS and reports throughput and CPU use. */
async function measure(serverPid: number, workers: number, op: (worker: number, i: number) => Promise<unknown>): Promise<Phase> {
  const c0 = process.cpuUsage();
  const s0 = processCpuMs(serverPid);
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const counts = await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      let n = 0;
      while (performance.now() < deadline) await op(w, n++);
      return n;
    }),
  );
  const ms = performance.now() - started;
  const c = process.cpuUsage(c0);
  return {
    opsPerSec: Math.round((counts.reduce((a, b) => a + b, 0) / ms) * 1000),
    clientCpuPct: Math.round(((c.user + c.system) / 1000 / ms) * 100),
    serverCpuPct: Math.round(((processCpuMs(serverPid) - s0) / ms) * 100),
  };
}

async function driverPart(uri: string, serverPid: number) {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => new MongoClient(uri, { maxPoolSize: 1 }).connect()));
  try {
    const colls: Collection<RunDoc>[] = clients.map((c) => c.db("bench").collection<RunDoc>("runs"));
    await colls[0].createIndex({ fireKey: 1 }, { unique: true });
    await colls[0].createIndex({ status: 1, leaseUntil: 1 });
    await colls[0].createIndex({ jobId: 1, scheduledFor: -1 });
    await measure(serverPid, 2, (w, i) => colls[w].insertOne(runDoc(`warm-${w}-${i}`))); // JIT warm-up, both sides

    const mine: { id: ObjectId; fireKey: string }[][] = colls.map(() => []);
    const inserts = await measure(serverPid, CLIENTS, async (w, i) => {
      const fireKey = `c${w}-${i}`;
      const { insertedId } = await colls[w].insertOne(runDoc(fireKey));
      mine[w].push({ id: insertedId, fireKey });
    });
    const claims = await measure(serverPid, CLIENTS, (w, i) => {
      const own = mine[w];
      const { id } = own[i % own.length];
      const release = Math.floor(i / own.length) % 2 === 1;
      return colls[w].findOneAndUpdate(
        { _id: id, status: release ? "RUNNING" : "QUEUED" },
        { $set: { status: release ? "QUEUED" : "RUNNING", leaseUntil: new Date() }, $inc: { fencingToken: 1 } },
      );
    });
    const finds = await measure(serverPid, CLIENTS, (w, i) => {
      const { id, fireKey } = mine[w][i % mine[w].length];
      return i % 2 === 0 ? colls[w].findOne({ fireKey }) : colls[w].findOne({ _id: id });
    });

    const times: number[] = [];
    for (let r = 0; r < INSERT_MANY_ROUNDS; r++) {
      const docs = Array.from({ length: 1000 }, (_, i) => runDoc(`bulk${r}-${i}`));
      const t0 = performance.now();
      await colls[0].insertMany(docs);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return {
      pointInserts: inserts,
      pointFindOneAndUpdate: claims,
      indexedFinds: finds,
      insertMany1000: { medianMs: Number(times[times.length >> 1].toFixed(1)), minMs: Number(times[0].toFixed(1)) },
      documents: await colls[0].estimatedDocumentCount(),
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** A raw connection sending pre-encoded OP_MSG frames, matching replies in order. */
class RawConnection {
  private buf = Buffer.alloc(0);
  private readonly waiting: ((frame: Buffer) => void)[] = [];
  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      while (this.buf.length >= 4 && this.buf.length >= this.buf.readInt32LE(0)) {
        const len = this.buf.readInt32LE(0);
        this.waiting.shift()!(this.buf.subarray(0, len));
        this.buf = this.buf.subarray(len);
      }
    });
  }
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = new Socket();
      s.setNoDelay(true);
      s.once("error", reject);
      s.connect(port, "127.0.0.1", () => resolve(new RawConnection(s)));
    });
  }
  async send(doc: Record<string, unknown>): Promise<void> {
    const reply = await new Promise<Buffer>((resolve) => {
      this.waiting.push(resolve);
      this.socket.write(encodeMsgRequest(1, doc));
    });
    const body = BSON.deserialize(reply.subarray(21));
    if (body.ok !== 1) throw new Error(`raw command failed: ${JSON.stringify(body)}`);
  }
  close(): void {
    this.socket.destroy();
  }
}

async function rawPart(port: number, serverPid: number) {
  const conns = await Promise.all(Array.from({ length: RAW_CONNECTIONS }, () => RawConnection.open(port)));
  const lsid = { id: new UUID() };
  const workers = RAW_CONNECTIONS * RAW_IN_FLIGHT;
  const ids: ObjectId[] = [];
  try {
    const conn = (w: number) => conns[w % RAW_CONNECTIONS];
    const inserts = await measure(serverPid, workers, async (w, i) => {
      const _id = new ObjectId();
      await conn(w).send({ insert: "raw", documents: [{ _id, ...runDoc(`raw-${w}-${i}`) }], ordered: true, lsid, $db: "bench" });
      ids.push(_id);
    });
    const claims = await measure(serverPid, workers, (w, i) =>
      conn(w).send({
        findAndModify: "raw",
        query: { _id: ids[(w * 7919 + i) % ids.length], status: { $in: ["QUEUED", "RUNNING"] } },
        update: { $set: { status: i % 2 ? "QUEUED" : "RUNNING", leaseUntil: new Date() }, $inc: { fencingToken: 1 } },
        lsid,
        $db: "bench",
      }),
    );
    const finds = await measure(serverPid, workers, (w, i) =>
      conn(w).send({ find: "raw", filter: { _id: ids[(w * 104729 + i) % ids.length] }, limit: 1, singleBatch: true, lsid, $db: "bench" }),
    );
    return { pointInserts: inserts, pointFindAndModify: claims, findsById: finds };
  } finally {
    for (const c of conns) c.close();
  }
}

async function main(): Promise<void> {
  const load = loadavg()[0];
  const { uri, port, child } = await startServer();
  try {
    const driver = await driverPart(uri, child.pid!);
    const raw = await rawPart(port, child.pid!);
    console.log(
      JSON.stringify(
        {
          machine: { cpus: (await import("node:os")).cpus().length, loadAvg1mBefore: Number(load.toFixed(2)), loadAvg1mAfter: Number(loadavg()[0].toFixed(2)) },
          secondsPerPhase: SECONDS,
          driver: { clients: CLIENTS, ...driver },
          serverCapacityRawWire: { connections: RAW_CONNECTIONS, inFlightPerConnection: RAW_IN_FLIGHT, ...raw },
        },
        null,
        2,
      ),
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

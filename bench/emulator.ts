/**
 * Emulator throughput with the official driver, server and clients in separate processes (as in
 * real use). Run: node --import tsx bench/emulator.ts [--seconds N] [--clients N]
 * Set EMULATOR_CPU_PROF=DIR to write a V8 CPU profile of the server process into DIR.
 *
 * Reports: point inserts/s, point findOneAndUpdate/s (claim-style filter on _id + status),
 * indexed finds/s (unique fireKey), each with N concurrent MongoClients doing one operation at a
 * time; and the median time of insertMany(1000 run-like documents).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { MongoClient, ObjectId, type Collection } from "mongodb";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const SECONDS = arg("seconds", 3);
const CLIENTS = arg("clients", 8);
const INSERT_MANY_ROUNDS = 9;

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
  pool: string;
  resources: { cpu: number; memoryMb: number };
  history: { from: string; to: string; at: Date }[];
}

function runDoc(i: number, tag: string): RunDoc {
  const now = new Date();
  return {
    fireKey: `${tag}-${i}@${now.getTime()}`,
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

async function startServer(): Promise<{ uri: string; child: ChildProcess }> {
  const bin = fileURLToPath(new URL("../src/emulator/bin.ts", import.meta.url));
  const prof = process.env.EMULATOR_CPU_PROF;
  const args = [...(prof ? ["--cpu-prof", "--cpu-prof-dir", prof] : []), "--import", "tsx", bin, "--port", "0"];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const uri = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as { uri?: string };
      if (entry.uri) resolve(entry.uri);
    });
    child.once("exit", (code) => reject(new Error(`emulator exited with ${code}`)));
  });
  return { uri, child };
}

/** Runs `op` in a loop on every client for SECONDS; returns operations per second. */
async function measure(colls: Collection<RunDoc>[], op: (coll: Collection<RunDoc>, client: number, i: number) => Promise<unknown>): Promise<number> {
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const counts = await Promise.all(
    colls.map(async (coll, c) => {
      let n = 0;
      while (performance.now() < deadline) await op(coll, c, n++);
      return n;
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return counts.reduce((a, b) => a + b, 0) / elapsed;
}

async function main(): Promise<void> {
  const { uri, child } = await startServer();
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => new MongoClient(uri, { maxPoolSize: 1 }).connect()));
  try {
    const colls = clients.map((c) => c.db("bench").collection<RunDoc>("runs"));
    await colls[0].createIndex({ fireKey: 1 }, { unique: true });
    await colls[0].createIndex({ status: 1, leaseUntil: 1 });
    await colls[0].createIndex({ jobId: 1, scheduledFor: -1 });

    // Warm up JITs on both sides.
    await measure(colls.slice(0, 2), (coll, c, i) => coll.insertOne(runDoc(i, `warm${c}`)));

    const ids: ObjectId[][] = colls.map(() => []);
    const inserts = await measure(colls, async (coll, c, i) => {
      const { insertedId } = await coll.insertOne(runDoc(i, `c${c}`));
      ids[c].push(insertedId);
    });

    const claims = await measure(colls, (coll, c, i) => {
      const mine = ids[c];
      const _id = mine[i % mine.length];
      const odd = Math.floor(i / mine.length) % 2 === 1;
      return coll.findOneAndUpdate(
        { _id, status: odd ? "RUNNING" : "QUEUED" },
        { $set: { status: odd ? "QUEUED" : "RUNNING", leaseUntil: new Date() }, $inc: { fencingToken: 1 } },
      );
    });

    const finds = await measure(colls, (coll, c, i) => coll.findOne({ fireKey: `c${c}-${i % ids[c].length}@0` }).then(() => coll.findOne({ _id: ids[c][i % ids[c].length] })));

    const times: number[] = [];
    for (let r = 0; r < INSERT_MANY_ROUNDS; r++) {
      const docs = Array.from({ length: 1000 }, (_, i) => runDoc(i, `bulk${r}`));
      const t0 = performance.now();
      await colls[0].insertMany(docs);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const total = await colls[0].estimatedDocumentCount();

    const results = {
      clients: CLIENTS,
      secondsPerPhase: SECONDS,
      pointInsertsPerSec: Math.round(inserts),
      pointFindOneAndUpdatePerSec: Math.round(claims),
      // each iteration of the find phase does two finds (fireKey, then _id)
      indexedFindsPerSec: Math.round(finds * 2),
      insertMany1000MedianMs: Number(times[Math.floor(times.length / 2)].toFixed(2)),
      insertMany1000MinMs: Number(times[0].toFixed(2)),
      documentsAtEnd: total,
    };
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

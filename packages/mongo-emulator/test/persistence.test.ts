/**
 * Durability with a data directory: restart, torn journal tail, snapshot compaction, j:true
 * acknowledgement and a SIGKILL crash. Emulator-only (a real server's storage is not ours).
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Long, MongoClient, MongoServerError } from "mongodb";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../src/index.js";
import { frame, readFrames } from "../src/persistence.js";
import { EMULATOR_ONLY, ON_EMULATOR, type Loose } from "./target.js";

const dirs: string[] = [];
const running: RunningEmulator[] = [];
const clients: MongoClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((e) => e.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "kairos-emu-"));
  dirs.push(d);
  return d;
}

type Logged = { level: string; msg: string; fields?: Record<string, unknown> };

async function start(dir: string, extra: Parameters<typeof startEmulator>[0] = {}, logs: Logged[] = []) {
  const em = await startEmulator({ dataDir: dir, log: (level, msg, fields) => logs.push({ level, msg, fields }), ...extra });
  running.push(em);
  const client = await new MongoClient(em.uri).connect();
  clients.push(client);
  return { em, client, db: client.db("p") };
}

async function stop(em: RunningEmulator, client: MongoClient): Promise<void> {
  await client.close();
  clients.splice(clients.indexOf(client), 1);
  await em.stop();
  running.splice(running.indexOf(em), 1);
}

function journals(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.startsWith("journal-")).sort();
}

describe.skipIf(!ON_EMULATOR)(`persistence ${EMULATOR_ONLY}`, () => {
  it("keeps data, types and indexes across a restart", async () => {
    const dir = dataDir();
    let { em, client, db } = await start(dir);
    const runs = db.collection<Loose>("runs");
    await runs.createIndex({ fireKey: 1 }, { unique: true });
    await runs.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, fireKey: `k${i}`, big: Long.fromString("9007199254740993"), at: new Date(i) })));
    await runs.updateOne({ _id: 3 }, { $set: { status: "RUNNING" }, $inc: { attempt: 1 } });
    await runs.deleteOne({ _id: 4 });
    await db.collection<Loose>("gone").insertOne({ x: 1 });
    await db.collection<Loose>("gone").drop();
    await stop(em, client);

    ({ em, client, db } = await start(dir));
    const again = db.collection<Loose>("runs");
    expect(await again.countDocuments()).toBe(49);
    expect(await again.findOne({ _id: 3 })).toMatchObject({ status: "RUNNING", attempt: 1, fireKey: "k3" });
    expect(await again.findOne({ _id: 4 })).toBeNull();
    const typed = await again.findOne({ _id: 7 }, { promoteLongs: false });
    expect(typed!.big.toString()).toBe("9007199254740993");
    expect(typed!.at).toEqual(new Date(7));
    expect((await db.listCollections().toArray()).map((c) => c.name)).toEqual(["runs"]);
    const dup = await again.insertOne({ fireKey: "k1" }).catch((e) => e);
    expect(dup).toBeInstanceOf(MongoServerError);
    expect(dup.code).toBe(11000);
  });

  it("tolerates a torn last journal record by truncating it", async () => {
    const dir = dataDir();
    let { em, client, db } = await start(dir);
    await db.collection<Loose>("c").insertMany([{ _id: 1 }, { _id: 2 }]);
    await stop(em, client);
    const [file] = journals(dir);
    const path = join(dir, file);
    const goodLength = statSync(path).size;
    const torn = frame({ o: "i", ns: "p.c", d: { _id: 3, pad: "x".repeat(100) } });
    appendFileSync(path, torn.subarray(0, torn.length - 7)); // a write cut short by a crash

    const logs: Logged[] = [];
    ({ em, client, db } = await start(dir, {}, logs));
    expect((await db.collection<Loose>("c").find().toArray()).map((d) => d._id)).toEqual([1, 2]);
    expect(statSync(path).size).toBe(goodLength);
    expect(logs.some((l) => l.level === "warn" && /torn/.test(l.msg))).toBe(true);
    await db.collection<Loose>("c").insertOne({ _id: 4 });
    await stop(em, client);
    ({ em, client, db } = await start(dir));
    expect((await db.collection<Loose>("c").find().toArray()).map((d) => d._id)).toEqual([1, 2, 4]);
  });

  it("treats a record with a bad checksum as the end of the journal", async () => {
    const dir = dataDir();
    let { em, client, db } = await start(dir);
    await db.collection<Loose>("c").insertMany([{ _id: 1 }, { _id: 2 }]);
    await stop(em, client);
    const path = join(dir, journals(dir)[0]);
    const bytes = readFileSync(path);
    const { records } = readFrames(bytes);
    expect(records.length).toBeGreaterThanOrEqual(3); // create + 2 inserts
    bytes[bytes.length - 3] ^= 0xff; // flip a bit inside the last record
    writeFileSync(path, bytes);
    ({ em, client, db } = await start(dir));
    expect((await db.collection<Loose>("c").find().toArray()).map((d) => d._id)).toEqual([1]);
  });

  it("compacts the journal into a snapshot and restarts from both", async () => {
    const dir = dataDir();
    let { em, client, db } = await start(dir, { compactBytes: 16 * 1024, flushIntervalMs: 5 });
    const c = db.collection<Loose>("c");
    await c.createIndex({ n: 1 }, { unique: true });
    for (let i = 0; i < 300; i++) await c.insertOne({ _id: i, n: i, pad: "y".repeat(80) });
    const deadline = Date.now() + 5000;
    while (!existsSync(join(dir, "snapshot.bson")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(join(dir, "snapshot.bson"))).toBe(true);
    await c.updateOne({ _id: 0 }, { $set: { after: true } });
    await c.deleteOne({ _id: 1 });
    await stop(em, client);
    expect(journals(dir).length).toBeLessThanOrEqual(2);

    ({ em, client, db } = await start(dir));
    const again = db.collection<Loose>("c");
    expect(await again.countDocuments()).toBe(299);
    expect(await again.findOne({ _id: 0 })).toMatchObject({ after: true });
    expect((await again.listIndexes().toArray()).map((i) => i.name)).toEqual(["_id_", "n_1"]);
    expect((await again.insertOne({ n: 5 }).catch((e) => e)).code).toBe(11000);
  });

  it("acknowledges writeConcern j:true only once the write is on disk", async () => {
    const dir = dataDir();
    const { db } = await start(dir, { flushIntervalMs: 10_000 });
    await db.collection<Loose>("c").insertOne({ _id: "durable" }, { writeConcern: { j: true } });
    const { records } = readFrames(readFileSync(join(dir, journals(dir)[0])));
    expect(records.some((r) => (r.d as { _id?: unknown } | undefined)?._id === "durable")).toBe(true);
  });

  it("refuses to start on a damaged snapshot", async () => {
    const dir = dataDir();
    writeFileSync(join(dir, "snapshot.bson"), Buffer.from("definitely not a snapshot"));
    await expect(startEmulator({ dataDir: dir })).rejects.toThrow(/damaged/);
  });

  it("recovers j:true writes after the process is killed with SIGKILL", async () => {
    const dir = dataDir();
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("../src/bin.ts", import.meta.url)), "--port", "0", "--data-dir", dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const uri = await new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout! });
        rl.on("line", (line) => {
          const entry = JSON.parse(line) as { uri?: string };
          if (entry.uri) resolve(entry.uri);
        });
        child.once("exit", (code) => reject(new Error(`emulator exited early with ${code}`)));
      });
      const client = await new MongoClient(uri).connect();
      await client.db("p").collection<Loose>("c").insertMany([{ _id: 1 }, { _id: 2 }], { writeConcern: { j: true } });
      await client.close();
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    const { db } = await start(dir);
    expect((await db.collection<Loose>("c").find().toArray()).map((d) => d._id)).toEqual([1, 2]);
  });
});

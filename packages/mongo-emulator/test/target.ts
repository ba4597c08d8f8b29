/**
 * Where the emulator conformance tests run: against an in-process emulator by default, or
 * against a real MongoDB when MONGO_URL is set (so both can be checked to agree). Each test file
 * uses its own database and drops it at the end.
 */
import { MongoClient, type Db, type Document, type ObjectId } from "mongodb";
import { startEmulator, type RunningEmulator } from "../src/index.js";

/** Test documents use numbers, strings and ObjectIds as _id. */
export type Loose = Document & { _id?: number | string | ObjectId };

export const MONGO_URL = process.env.MONGO_URL;
/** True when the tests run against the emulator (MONGO_URL unset). */
export const ON_EMULATOR = !MONGO_URL;
/** Suffix for emulator-only test names, so a skip under MONGO_URL says why. */
export const EMULATOR_ONLY = "[emulator-only; skipped when MONGO_URL is set]";

export interface Target {
  uri: string;
  client: MongoClient;
  db: Db;
  /** The in-process emulator, or null against MONGO_URL. */
  emulator: RunningEmulator | null;
  close(): Promise<void>;
}

export async function openTarget(label: string): Promise<Target> {
  const emulator = MONGO_URL ? null : await startEmulator({ ttlSweepMs: 100 });
  const uri = MONGO_URL ?? emulator!.uri;
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const dbName = `kairos_emu_${label}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const db = client.db(dbName);
  return {
    uri,
    client,
    db,
    emulator,
    async close() {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
      await emulator?.stop();
    },
  };
}

/** Documents examined by the emulator so far (its serverStatus.kairosEmulator.docsExamined). */
export async function docsExamined(client: MongoClient): Promise<number> {
  const status = await client.db("admin").command({ serverStatus: 1 });
  return status.kairosEmulator.docsExamined as number;
}

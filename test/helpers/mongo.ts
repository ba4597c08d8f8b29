/** The MongoDB emulator, in-process, for tests of the services that need a real store. */
import { afterAll, beforeAll } from "vitest";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import { connectMongo, type Mongo } from "../../src/store/mongo.js";

/** Starts an emulator and connects to database `db` before the file's tests; stops both after them. */
export function useEmulatedMongo(db: string): { readonly mongo: Mongo } {
  let emulator: RunningEmulator | undefined;
  let mongo: Mongo | undefined;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    mongo = await connectMongo(emulator.uri, db);
  });
  afterAll(async () => {
    await mongo?.close();
    await emulator?.stop();
  });
  return {
    get mongo() {
      if (!mongo) throw new Error("useEmulatedMongo: the store is used before beforeAll ran");
      return mongo;
    },
  };
}

/**
 * Stand-alone entry for the emulator (`node --import tsx packages/mongo-emulator/src/bin.ts --port 0`), used by
 * the benchmark to run the server in its own process. `kairos emulator` is the user-facing way.
 */
import { emulatorMain } from "./cli.js";

emulatorMain(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`kairos emulator: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(2);
});

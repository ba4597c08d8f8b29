/**
 * `kairos emulator [--port N] [--host H] [--data-dir DIR]`: runs the MongoDB emulator in the
 * foreground until SIGINT/SIGTERM. Bad flags throw an Error whose message names the flag and
 * what is allowed; the caller prints it and exits with status 2.
 */
import { startEmulator, type LogFn } from "./index.js";

export const EMULATOR_USAGE = `Usage: kairos emulator [--port N] [--host H] [--data-dir DIR]

Runs the Kairos MongoDB emulator, a development/test server speaking the MongoDB wire protocol.

  --port N        TCP port to listen on, 0-65535 (default 27017; 0 picks a free port)
  --host H        interface to bind (default 127.0.0.1)
  --data-dir DIR  keep data in DIR (snapshot + journal); without it data is in memory only
  --help          show this help
`;

export interface EmulatorArgs {
  port: number;
  host: string;
  dataDir: string | undefined;
  help: boolean;
}

export function parseEmulatorArgs(argv: string[]): EmulatorArgs {
  const args: EmulatorArgs = { port: 27017, host: "127.0.0.1", dataDir: undefined, help: false };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i];
    const eq = raw.indexOf("=");
    const flag = raw.startsWith("--") && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith("--") && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith("--"))) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--port": {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`--port must be an integer from 0 to 65535, got '${v}'`);
        args.port = Number(v);
        break;
      }
      case "--host": {
        const v = value();
        if (v.length === 0) throw new Error("--host must not be empty");
        args.host = v;
        break;
      }
      case "--data-dir": {
        const v = value();
        if (v.length === 0) throw new Error("--data-dir must not be empty");
        args.dataDir = v;
        break;
      }
      case "--help":
      case "-h":
        args.help = true;
        break;
      default:
        throw new Error(`unknown flag '${raw}' for 'kairos emulator'; allowed: --port N, --host H, --data-dir DIR, --help`);
    }
  }
  return args;
}

/** One JSON object per line on stdout, like the rest of Kairos's logs. */
const jsonLog: LogFn = (level, msg, fields) => {
  process.stdout.write(JSON.stringify({ level, time: new Date().toISOString(), component: "emulator", msg, ...fields }) + "\n");
};

export async function emulatorMain(argv: string[]): Promise<void> {
  const args = parseEmulatorArgs(argv);
  if (args.help) {
    process.stdout.write(EMULATOR_USAGE);
    return;
  }
  const emulator = await startEmulator({ port: args.port, host: args.host, dataDir: args.dataDir, log: jsonLog });
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      jsonLog("info", "emulator shutting down", { signal });
      resolve();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  await emulator.stop();
}

/**
 * Kairos MongoDB emulator: a development and test server that speaks the MongoDB wire protocol
 * on a real TCP socket, so the official `mongodb` driver can be used without a MongoDB install.
 * It is not a database product; see this package's README.md for what it supports and guarantees.
 */
import { Engine } from "./engine.js";
import { Persistence, type LogFn } from "./persistence.js";
import { EmulatorServer } from "./server.js";

export interface EmulatorOptions {
  /** TCP port; 0 or omitted picks a free port. */
  port?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  host?: string;
  /** Directory for the snapshot and journal. Without it, data lives in memory only. */
  dataDir?: string;
  log?: LogFn;
  /** Period of the TTL monitor that deletes expired documents. @default 1000 */
  ttlSweepMs?: number;
  /** Period of journal flushes (write + fdatasync) when a dataDir is set. @default 50 */
  flushIntervalMs?: number;
  /** Journal size that triggers snapshot compaction. @default 64 MiB */
  compactBytes?: number;
}

export interface RunningEmulator {
  /** Connection string, e.g. `mongodb://127.0.0.1:27017`. */
  uri: string;
  port: number;
  /** Closes the listener and all client sockets, and flushes the journal. */
  stop(): Promise<void>;
}

const CURSOR_SWEEP_MS = 60_000;

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const log: LogFn = opts.log ?? (() => {});
  const engine = new Engine();
  const persistence = opts.dataDir
    ? await Persistence.open(opts.dataDir, engine, log, { flushIntervalMs: opts.flushIntervalMs, compactBytes: opts.compactBytes })
    : null;
  const server = new EmulatorServer({ engine, persistence, log });
  let port: number;
  try {
    port = await server.listen(host, opts.port ?? 0);
  } catch (e) {
    await persistence?.close();
    throw e;
  }
  const ttl = setInterval(() => {
    try {
      engine.sweepTtl(Date.now());
    } catch (e) {
      log("error", "TTL sweep failed", { error: (e as Error).message });
    }
  }, opts.ttlSweepMs ?? 1000);
  ttl.unref();
  const cursors = setInterval(() => engine.cursors.sweep(Date.now()), CURSOR_SWEEP_MS);
  cursors.unref();
  const uriHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const uri = `mongodb://${uriHost}:${port}`;
  log("info", "emulator listening", { uri, dataDir: opts.dataDir ?? null });

  let stopping: Promise<void> | null = null;
  return {
    uri,
    port,
    stop() {
      stopping ??= (async () => {
        clearInterval(ttl);
        clearInterval(cursors);
        await server.close();
        await persistence?.close();
        log("info", "emulator stopped", { uri });
      })();
      return stopping;
    },
  };
}

export type { LogFn } from "./persistence.js";
export { DataDirInUseError, LOCK_FILE } from "./dir-lock.js";

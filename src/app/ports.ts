/**
 * The ports a role listens on, checked before anything starts: a taken port is refused at once with
 * one line that names the setting to change (KAIROS_PORT / --port), before stores open or the dev
 * admin's one-time password is generated (and lost with a server that never came up).
 */
import { createServer } from "node:net";
import type { KairosConfig } from "../config/index.js";
import { ConfigError } from "../domain/index.js";
import { ListenError, asListenError, listen } from "../support/index.js";

/** The environment variable and flag that set a port (src/config/flags.ts). */
export interface PortSetting {
  env: string | null;
  flag: string;
}

export const API_PORT: PortSetting = { env: "KAIROS_PORT", flag: "--port" };
export const METRICS_PORT: PortSetting = { env: "KAIROS_METRICS_PORT", flag: "--metrics-port" };
/** `kairos emulator` has flags only. */
export const EMULATOR_PORT: PortSetting = { env: null, flag: "--port" };

/**
 * `kairos emulator`: a bad flag, or a port it cannot listen on, as a ConfigError (one line, exit 2)
 * rather than a stack; the package's own errors are plain Errors.
 */
export async function runEmulatorCli(cli: { emulatorMain(argv: string[]): Promise<void>; parseEmulatorArgs(argv: string[]): { port: number; host: string } }, argv: string[]): Promise<void> {
  let args: { port: number; host: string };
  try {
    args = cli.parseEmulatorArgs(argv);
  } catch (e) {
    throw new ConfigError(e instanceof Error ? e.message : String(e));
  }
  await cli.emulatorMain(argv).catch((e: unknown) => {
    throw nameSetting(asListenError(e, args.port, args.host), EMULATOR_PORT);
  });
}

/** A ListenError becomes a ConfigError naming what to change; anything else is returned as it is. */
export function nameSetting(e: unknown, setting: PortSetting): unknown {
  if (!(e instanceof ListenError)) return e;
  const fix =
    e.code === "EADDRNOTAVAIL"
      ? `set ${setting.env ? "KAIROS_HOST or " : ""}--host to an address of this machine (127.0.0.1, or 0.0.0.0 for all of them)`
      : `${e.code === "EADDRINUSE" ? "stop it, or " : ""}choose another port with ${setting.env ? `${setting.env}=<port> or ` : ""}${setting.flag} <port>`;
  return new ConfigError(`${e.message}: ${fix}`, { cause: e });
}

/** Binds `port` on `host` for a moment and lets it go: throws the named ConfigError if it cannot. */
async function checkPort(port: number, host: string, setting: PortSetting): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await listen(probe, port, host);
  } catch (e) {
    throw nameSetting(e, setting);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** The port the role will listen on (the API's, or without it the metrics port), checked first. */
export async function checkRolePorts(config: KairosConfig): Promise<void> {
  const api = config.role === "dev" || config.role === "api";
  if (api) await checkPort(config.port, config.host, API_PORT);
  else if (config.metricsPort !== null) await checkPort(config.metricsPort, config.host, METRICS_PORT);
}

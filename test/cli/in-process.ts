/**
 * The command line run in the test's own process (`runCli` with a captured Io): no build, no
 * subprocess. The environment is only what the test gives (a server and a token, a config home).
 */
import { runCli } from "../../src/cli/program.js";
import type { Io } from "../../src/cli/output.js";

export interface InProcessRun {
  code: number;
  out: string;
  err: string;
}

export async function runKairos(
  argv: string[],
  opts: { env: Record<string, string>; stdin?: string; /** stdin is a terminal: its read never ends (no Ctrl-D here). */ terminal?: boolean },
): Promise<InProcessRun> {
  let out = "";
  let err = "";
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    color: false,
    interactive: false,
    env: opts.env,
    stdin: opts.terminal ? () => new Promise<string>(() => undefined) : async () => opts.stdin ?? "",
    stdinIsTerminal: opts.terminal,
    now: () => Date.now(),
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

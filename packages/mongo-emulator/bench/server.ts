/**
 * What the emulator's benchmarks share: their numeric command-line options, the server started in
 * a process of its own (so that its CPU can be told from the client's), and a process's CPU time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** `--<name> N` from the command line, else `fallback`. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** The emulator on a free port in a child process (`EMULATOR_CPU_PROF=dir`: with a CPU profile written there). */
export async function startServer(): Promise<{ uri: string; port: number; child: ChildProcess }> {
  const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url));
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
  return { uri, port: Number(uri.split(":").pop()), child };
}

/** CPU time (ms) used so far by a process, from /proc (Linux; NaN elsewhere). */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime in 10 ms ticks
  } catch {
    return NaN;
  }
}

/**
 * Output for people (aligned tables, relative times, colour on a terminal only) and for scripts
 * (`-o json|yaml`: only the data, on stdout, with stable field names).
 */
import stringWidth from "string-width";
import { stringify as yamlStringify } from "yaml";
import { CliError } from "./errors.js";

export type OutputFormat = "table" | "json" | "yaml";
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["table", "json", "yaml"];

export function parseFormat(v: string): OutputFormat {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(v)) throw new CliError(`-o/--output: "${v}" is not one of ${OUTPUT_FORMATS.join(", ")}`);
  return v as OutputFormat;
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Colour on stdout: it is a terminal and NO_COLOR is unset. */
  color: boolean;
  /** stderr is a terminal: progress lines may be drawn there. */
  interactive: boolean;
  env: NodeJS.ProcessEnv;
  /** Reads all of stdin (for --password-stdin). */
  stdin(): Promise<string>;
  /** stdin is a terminal (a secret typed there would show, and the read waits for Ctrl-D): unset is false. */
  stdinIsTerminal?: boolean;
  now(): number;
}

/** The exit code when stdout was closed before the output ended, as a tool killed by SIGPIPE (128 + 13) has. */
export const EXIT_CLOSED_OUTPUT = 141;

/**
 * A reader that stops early (`kairos get jobs -o json | head -c 100`) closes the pipe: the next
 * write failed with EPIPE, which ended kairos with "Unhandled 'error' event" and a stack. It ends
 * quietly now, as other tools do.
 */
function endQuietlyWhenClosed(stream: NodeJS.WriteStream): void {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(EXIT_CLOSED_OUTPUT);
    throw e;
  });
}

export function processIo(): Io {
  endQuietlyWhenClosed(process.stdout);
  endQuietlyWhenClosed(process.stderr);
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "";
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    color: Boolean(process.stdout.isTTY) && !noColor,
    interactive: Boolean(process.stderr.isTTY),
    stdinIsTerminal: Boolean(process.stdin.isTTY),
    env: process.env,
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    now: () => Date.now(),
  };
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1 } as const;
export type Colour = keyof typeof CODES;

export function paint(io: Pick<Io, "color">, colour: Colour, text: string): string {
  return io.color ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text;
}

/** The colour of a run, job or task status. */
export function statusColour(status: string): Colour {
  if (["SUCCEEDED", "ACTIVE", "ONLINE", "FIRED"].includes(status)) return "green";
  if (["FAILED", "DEAD", "TIMED_OUT", "UPSTREAM_FAILED", "MISSED"].includes(status)) return "red";
  if (["RUNNING", "QUEUED", "SCHEDULED", "PENDING", "RETRYING", "RETRY_SCHEDULED"].includes(status)) return "cyan";
  return "yellow";
}

/**
 * How many terminal columns `s` takes: East Asian Wide and Fullwidth characters and emoji two,
 * combining marks and zero-width characters none, colour codes none (string-width, which reads
 * Unicode's East Asian Width and splits graphemes with Intl.Segmenter).
 */
export const displayWidth = (s: string): number => stringWidth(s);

/** Aligned columns (by display width, so a job named 日本語ジョブ keeps them lined up), a header in capitals. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - displayWidth(c))))
      .join("   ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** Prints `data` as JSON or YAML, or calls `human` for the table form. */
export function emit(io: Io, format: OutputFormat, data: unknown, human: () => string): void {
  if (format === "json") io.out(`${JSON.stringify(data, null, 2)}\n`);
  else if (format === "yaml") io.out(yamlStringify(data));
  else io.out(human());
}

/** `3m ago`, `in 2h`, `just now`; `-` for nothing. */
export function relative(iso: string | null | undefined, now: number): string {
  if (!iso) return "-";
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  if (abs < 5_000) return "just now";
  const units: Array<[number, string]> = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "m"],
    [1_000, "s"],
  ];
  const [size, unit] = units.find(([u]) => abs >= u)!;
  const n = Math.floor(abs / size);
  return ms < 0 ? `${n}${unit} ago` : `in ${n}${unit}`;
}

/** A duration in ms as `1.2s`, `3m 04s`. */
export function humanMs(ms: number | null | undefined): string {
  if (ms == null) return "-";
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return m < 60 ? `${m}m ${String(s).padStart(2, "0")}s` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

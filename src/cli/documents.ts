/**
 * The files `kairos apply -f` and `kairos run -f` read: YAML or JSON (a JSON file is read as YAML,
 * which it is), one or many documents a file (`---`, or a top-level list), each a CreateJobInput or,
 * with `tasks`, a CreateDagInput. Every problem names the file, the line and column, and the field.
 */
import { createReadStream } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node as YamlNode } from "yaml";
import type { CreateDagInput, CreateJobInput, ScheduleInput } from "../../generated/client/graphql.js";
import { normalizeRetry, normalizeSchedule, ScheduleError } from "../timing/index.js";
import { fileProblem } from "../domain/index.js";
import { CliError, EXIT } from "./errors.js";
import { jobFileSchema, validate, type JsonSchema } from "./json-schema.js";

export type Path = Array<string | number>;

/** A schedule as the file has it (instants as ISO-8601 text) in the form src/timing takes (epoch ms). */
export function timingSchedule(s: ScheduleInput): Parameters<typeof normalizeSchedule>[0] {
  const ms = (v: string | null | undefined) => (v == null ? v : Date.parse(v));
  return { ...s, at: ms(s.at), startAt: ms(s.startAt), endAt: ms(s.endAt) } as Parameters<typeof normalizeSchedule>[0];
}

export interface LoadedDoc {
  file: string;
  /** Where the document starts, for messages about it as a whole. */
  line: number;
  kind: "job" | "dag";
  name: string;
  input: CreateJobInput | CreateDagInput;
  /** `file:line:col` of a field (the nearest enclosing node that exists). */
  at(path: Path, key?: boolean): string;
}

export interface FileProblem {
  where: string;
  field: string;
  message: string;
}

export const formatPath = (path: Path): string => path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");

export function parseFieldPath(field: string): Path {
  const out: Path = [];
  for (const part of field.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

const FILE_RE = /\.(ya?ml|json)$/i;

/** A file or folder that cannot be read, in words. */
const unreadable = (p: string, e: unknown) => new CliError(`${p}: ${fileProblem(e)}`);

/**
 * The files under `path` (itself if a file), sorted, for each -f given. A folder reached again
 * through a symbolic link inside itself (`up -> ..`) is not read again: it was read to no end, and
 * said "no such file or directory" of a path forty links long.
 */
export async function listFiles(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  const visit = async (p: string, explicit: boolean, within: ReadonlySet<string>): Promise<void> => {
    let st;
    try {
      st = await stat(p);
    } catch (e) {
      throw unreadable(p, e);
    }
    if (st.isDirectory()) {
      let real: string;
      let entries: string[];
      try {
        real = await realpath(p);
        entries = (await readdir(p)).sort();
      } catch (e) {
        throw unreadable(p, e);
      }
      if (within.has(real)) return;
      const path = new Set(within).add(real);
      for (const e of entries) if (!e.startsWith(".")) await visit(join(p, e), false, path);
    } else if (explicit || FILE_RE.test(p)) out.push(p);
  };
  for (const p of paths) await visit(p, true, new Set());
  return out;
}

/** The most of one file apply and run read: a job file is small, and /dev/zero or a log given by mistake has no end. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The file's bytes, read up to MAX_FILE_BYTES (a pipe such as `-f <(envsubst < job.yaml)` too). */
async function readCapped(path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
      size += (chunk as Buffer).length;
      if (size > MAX_FILE_BYTES) {
        throw new CliError(`${path}: is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB, more than any job file; give YAML or JSON files of jobs and DAGs (split a larger one, a folder is read whole)`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw unreadable(path, e);
  }
  return Buffer.concat(chunks);
}

function locator(file: string, doc: Document, lines: LineCounter, base: Path) {
  const pos = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return `${file}:${line}:${col}`;
  };
  return (path: Path, key = false): string => {
    const full = [...base, ...path];
    for (let n = full.length; n >= 0; n--) {
      const parentPath = full.slice(0, Math.max(0, n - 1));
      if (key && n === full.length && n > 0) {
        const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
        if (isMap(parent)) {
          const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === full[n - 1]);
          const k = pair?.key as YamlNode | undefined;
          if (k?.range) return pos(k.range[0]);
        }
        continue;
      }
      const node = (n === 0 ? doc.contents : doc.getIn(full.slice(0, n), true)) as YamlNode | null | undefined;
      if (node && typeof node === "object" && "range" in node && node.range) return pos(node.range[0]);
    }
    return `${file}:1:1`;
  };
}

/**
 * The file's text, or null after noting where it is not UTF-8 (read as UTF-8 regardless, a byte
 * that is none became U+FFFD in a name or a command, silently).
 */
function utf8Text(file: string, bytes: Buffer, problems: FileProblem[]): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const at = firstNonUtf8(bytes);
    const before = bytes.subarray(0, at).toString("utf8").split("\n");
    problems.push({ where: `${file}:${before.length}:${before.at(-1)!.length + 1}`, field: "(encoding)", message: `is not UTF-8 (byte 0x${bytes[at]!.toString(16).padStart(2, "0")}): save the file as UTF-8` });
    return null;
  }
}

/** Where the first byte is that starts no well-formed UTF-8 sequence (the file's length when none does). */
function firstNonUtf8(b: Buffer): number {
  for (let i = 0; i < b.length; ) {
    const n = b[i]! < 0x80 ? 1 : b[i]! >= 0xc2 && b[i]! <= 0xdf ? 2 : b[i]! >= 0xe0 && b[i]! <= 0xef ? 3 : b[i]! >= 0xf0 && b[i]! <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    // Whether it decodes alone also refuses overlong forms, surrogates and code points past U+10FFFF.
    if (n > 1 && Buffer.from(b.subarray(i, i + n).toString("utf8"), "utf8").compare(b.subarray(i, i + n)) !== 0) return i;
    i += n;
  }
  return b.length;
}

/**
 * Reads and checks every document of `files`. Throws a CliError (exit 1) listing every problem,
 * each as `file:line:col: field: message`.
 */
export async function loadDocuments(files: string[], opts: { cwd?: string; schema?: JsonSchema; now?: number; defaultSchedule?: boolean } = {}): Promise<LoadedDoc[]> {
  const schema = opts.schema ?? jobFileSchema();
  const now = opts.now ?? Date.now();
  const docs: LoadedDoc[] = [];
  const problems: FileProblem[] = [];
  for (const path of files) {
    const file = opts.cwd ? relative(opts.cwd, path) || path : path;
    const text = utf8Text(file, await readCapped(path), problems);
    if (text === null) continue;
    const lines = new LineCounter();
    const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    const all = Array.isArray(parsed) ? parsed : [parsed];
    for (const doc of all) {
      if (doc.errors.length) {
        for (const e of doc.errors) {
          const { line, col } = lines.linePos(e.pos[0]);
          problems.push({ where: `${file}:${line}:${col}`, field: "(syntax)", message: e.message.split("\n")[0]! });
        }
        continue;
      }
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: 100 });
      } catch (e) {
        // yaml refuses aliases that expand past maxAliasCount (a "billion laughs" file) with a ReferenceError.
        if (!(e instanceof ReferenceError)) throw e;
        const { line, col } = lines.linePos(doc.range[0]);
        problems.push({ where: `${file}:${line}:${col}`, field: "(syntax)", message: "its aliases (*name) expand to too much: at most 100 uses of anchors, counting those inside other anchors" });
        continue;
      }
      if (value == null) continue;
      const items: Array<{ value: unknown; base: Path }> = isSeq(doc.contents)
        ? (value as unknown[]).map((v, i) => ({ value: v, base: [i] }))
        : [{ value, base: [] }];
      for (const item of items) {
        if (opts.defaultSchedule && item.value && typeof item.value === "object" && !Array.isArray(item.value) && !("schedule" in item.value) && !("tasks" in item.value)) {
          (item.value as Record<string, unknown>).schedule = { kind: "ONCE" };
        }
        const at = locator(file, doc as Document, lines, item.base);
        const found = validate(schema, item.value);
        for (const p of found) problems.push({ where: at(p.path, p.key), field: formatPath(p.path) || "(document)", message: p.message });
        if (found.length) continue;
        const input = item.value as CreateJobInput | CreateDagInput;
        const kind = "tasks" in input ? "dag" : "job";
        // The schedule and retry policy are checked offline by the server's own code (src/timing).
        for (const [field, check] of [
          ["schedule", () => input.schedule && normalizeSchedule(timingSchedule(input.schedule), now)],
          ["retry", () => kind === "job" && (input as CreateJobInput).retry && normalizeRetry((input as CreateJobInput).retry as Parameters<typeof normalizeRetry>[0])],
        ] as const) {
          try {
            check();
          } catch (e) {
            if (!(e instanceof ScheduleError)) throw e;
            const sub = e.field.startsWith(`${field}.`) ? e.field : `${field}.${e.field}`;
            problems.push({ where: at(parseFieldPath(sub)), field: sub, message: e.detail });
          }
        }
        docs.push({ file, line: Number(at([]).split(":").at(-2)), kind, name: String(input.name).trim(), input, at });
      }
    }
  }
  const seen = new Map<string, LoadedDoc>();
  for (const d of docs) {
    const key = `${d.kind}:${d.name}`;
    const first = seen.get(key);
    if (first) problems.push({ where: d.at(["name"]), field: "name", message: `${d.kind} "${d.name}" is also defined at ${first.at(["name"])}` });
    else seen.set(key, d);
  }
  if (problems.length) {
    throw new CliError(problems.map((p) => `${p.where}: ${p.field}: ${p.message}`).join("\n"), EXIT.FAILED);
  }
  return docs;
}

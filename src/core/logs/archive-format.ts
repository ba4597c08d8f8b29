/**
 * An archived log: the attempt's output as one gzip file (what `logUrl` downloads: the log exactly
 * as it was printed, stdout and stderr in order), and beside it a small gzip index of where the
 * stream changes, so `logs(...)` still answers chunks tagged with their stream after the archive.
 */
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { LogStream } from "../../domain/index.js";
import type { LogChunk } from "./types.js";

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** Chunks read back from an archive are at most this big. */
const ARCHIVE_CHUNK_BYTES = 64 * 1024;

/** The archive's index: the offset where each run of one stream starts, and the log's size. */
export interface StreamIndex {
  runs: Array<[offset: number, stream: LogStream]>;
  bytes: number;
}

/** Accumulates a log's chunks in order into its archive's two objects. */
export class ArchiveBuilder {
  private readonly parts: Buffer[] = [];
  private readonly index: StreamIndex = { runs: [], bytes: 0 };

  add(c: { offset: number; stream: LogStream; data: string }): void {
    const bytes = Buffer.from(c.data, "utf8");
    const last = this.index.runs[this.index.runs.length - 1];
    if (!last || last[1] !== c.stream) this.index.runs.push([this.index.bytes, c.stream]);
    this.parts.push(bytes);
    this.index.bytes += bytes.length;
  }

  get bytes(): number {
    return this.index.bytes;
  }

  async build(): Promise<{ log: Buffer; index: Buffer }> {
    const [log, index] = await Promise.all([gzip(Buffer.concat(this.parts)), gzip(Buffer.from(JSON.stringify(this.index)))]);
    return { log, index };
  }
}

/** An archive read back: its text and stream index. */
export interface OpenedArchive {
  text: Buffer;
  index: StreamIndex;
}

export async function openArchive(log: Buffer, index: Buffer): Promise<OpenedArchive> {
  const [text, idx] = await Promise.all([gunzip(log), gunzip(index)]);
  return { text, index: JSON.parse(idx.toString("utf8")) as StreamIndex };
}

/** Back off `at` to the start of a UTF-8 character (never past `min`). */
function charStart(text: Buffer, at: number, min: number): number {
  let i = at;
  while (i > min && i < text.length && (text[i]! & 0xc0) === 0x80) i--;
  return i;
}

/** Up to `limit` chunks of an opened archive from byte `from`: cut where the stream changes, and every 64 KiB. */
export function sliceArchive(a: OpenedArchive, ids: Pick<LogChunk, "runId" | "attempt" | "token">, from: number, limit: number): LogChunk[] {
  const out: LogChunk[] = [];
  const { runs } = a.index;
  let pos = Math.max(0, from);
  let r = 0;
  while (r + 1 < runs.length && runs[r + 1]![0] <= pos) r++;
  while (pos < a.text.length && out.length < limit && runs.length > 0) {
    const runEnd = r + 1 < runs.length ? runs[r + 1]![0] : a.text.length;
    let end = Math.min(runEnd, pos + ARCHIVE_CHUNK_BYTES);
    if (end < runEnd) end = charStart(a.text, end, pos + 1);
    const data = a.text.subarray(pos, end);
    out.push({ ...ids, offset: pos, size: data.length, stream: runs[r]![1], data: data.toString("utf8") });
    pos = end;
    if (pos >= runEnd) r++;
  }
  return out;
}

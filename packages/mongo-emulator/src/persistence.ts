/**
 * Durability for `--data-dir`: a snapshot plus an append-only journal.
 *
 * Files in the data directory:
 *   snapshot.bson        the state as of the start of journal `journalSeq` (written to
 *                        snapshot.tmp, fsynced, then renamed, so it is either whole or absent)
 *   journal-<seq>.bson   committed changes, in order, as full-document records
 *
 * Every file is a sequence of frames: uint32 CRC-32 of the BSON body, then the BSON body (which
 * carries its own length). A frame that is cut short or fails its CRC ends the file: on restart
 * the journal is truncated there (a torn last write), and everything before it is replayed.
 *
 * Write path: the engine reports each committed change synchronously; the record is serialized
 * into an in-memory queue and written + fdatasync'ed by a background flush every
 * `flushIntervalMs` (default 50 ms), or sooner when 1 MiB / 1000 records are queued or a client
 * asked for `writeConcern: {j: true}`. So a crash loses at most the writes acknowledged in the
 * last flush interval plus the one flush in flight (about 50-100 ms of writes); writes sent with
 * j:true are acknowledged only after they are on disk.
 *
 * Compaction: when the current journal grows past `compactBytes` and past the size of the last
 * snapshot, the state is captured in one synchronous step (stored documents are immutable, so
 * this copies references only), a new journal is started, and the snapshot is written in the
 * background. Old journals are deleted only after the new snapshot is renamed into place, so a
 * crash at any point leaves a snapshot and the complete chain of journals after it.
 */
import { BSON } from "bson";
import { constants as fsc } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, truncate, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import type { Collection } from "./collection.js";
import { lockDataDir } from "./dir-lock.js";
import type { Engine } from "./engine.js";
import type { IndexSpec } from "./indexes.js";
import { canonKey, normalizeInPlace, type Doc } from "./values.js";
import type { Binary } from "bson";

export type LogFn = (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;

export interface PersistenceOptions {
  /** Interval between journal flushes (write + fdatasync). @default 50 */
  flushIntervalMs?: number;
  /** Journal size that triggers a snapshot (if also larger than the last snapshot). @default 64 MiB */
  compactBytes?: number;
}

const SNAPSHOT = "snapshot.bson";
const SNAPSHOT_TMP = "snapshot.tmp";
const JOURNAL_RE = /^journal-(\d+)\.bson$/;
const FLUSH_BYTES = 1024 * 1024;
const FLUSH_RECORDS = 1000;
const READ_OPTIONS = { promoteValues: false, promoteBuffers: false, bsonRegExp: false } as const;

function journalName(seq: number): string {
  return `journal-${String(seq).padStart(8, "0")}.bson`;
}

export function frame(record: Doc): Buffer {
  const body = BSON.serialize(record);
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32LE(crc32(body), 0);
  out.set(body, 4);
  return out;
}

/** Decodes frames until the end or the first damaged frame; `validBytes` is where that is. */
export function readFrames(buf: Buffer): { records: Doc[]; validBytes: number } {
  const records: Doc[] = [];
  let pos = 0;
  while (pos + 9 <= buf.length) {
    const len = buf.readInt32LE(pos + 4);
    if (len < 5 || pos + 4 + len > buf.length) break;
    const body = buf.subarray(pos + 4, pos + 4 + len);
    if (crc32(body) !== buf.readUInt32LE(pos)) break;
    let doc: Doc;
    try {
      doc = BSON.deserialize(body, READ_OPTIONS) as Doc;
    } catch {
      break;
    }
    normalizeInPlace(doc);
    records.push(doc);
    pos += 4 + len;
  }
  return { records, validBytes: pos };
}

function splitNs(ns: string): [string, string] {
  const dot = ns.indexOf(".");
  return [ns.slice(0, dot), ns.slice(dot + 1)];
}

/** Applies one journal record to the engine (whose journal hook is detached during replay). */
export function applyRecord(engine: Engine, r: Doc): void {
  switch (r.o) {
    case "cc": {
      const [db, name] = splitNs(r.ns as string);
      if (!engine.collection(db, name)) engine.createCollection(db, name, (r.options as Doc) ?? {}, r.uuid as Binary | undefined);
      return;
    }
    case "dc": {
      const [db, name] = splitNs(r.ns as string);
      engine.dropCollection(db, name);
      return;
    }
    case "dd":
      engine.dropDatabase(r.db as string);
      return;
    case "i":
    case "u": {
      const [db, name] = splitNs(r.ns as string);
      const coll = engine.ensureCollection(db, name);
      const doc = r.d as Doc;
      const old = coll.docs.get(canonKey(doc._id));
      if (old) coll.replace(old, doc);
      else coll.insert(doc);
      return;
    }
    case "r": {
      const [db, name] = splitNs(r.ns as string);
      const coll = engine.collection(db, name);
      const rec = coll?.docs.get(canonKey(r.id));
      if (coll && rec) coll.remove(rec);
      return;
    }
    case "ci": {
      const [db, name] = splitNs(r.ns as string);
      engine.ensureCollection(db, name).createIndex(r.spec as unknown as IndexSpec);
      return;
    }
    case "di": {
      const [db, name] = splitNs(r.ns as string);
      const coll = engine.collection(db, name);
      const ix = coll?.findIndex(r.name as string);
      if (coll && ix) coll.dropIndex(ix);
      return;
    }
    default:
      throw new Error(`unknown journal record type ${String(r.o)}`);
  }
}

interface CapturedCollection {
  db: string;
  name: string;
  options: Doc;
  uuid: Binary;
  indexes: IndexSpec[];
  docs: Doc[];
}

function capture(engine: Engine): CapturedCollection[] {
  return [...engine.allCollections()].map((c: Collection) => ({
    db: c.db,
    name: c.name,
    options: c.options,
    uuid: c.uuid,
    indexes: c.indexes.map((ix) => ix.spec),
    docs: Array.from(c.docs.values(), (r) => r.doc),
  }));
}

export class Persistence {
  private fh: FileHandle | null = null;
  private seq = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private appended = 0;
  private synced = 0;
  private waiters: { target: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Serializes flushes and journal switches: only one touches the journal file at a time. */
  private chain: Promise<void> = Promise.resolve();
  private compacting: Promise<void> | null = null;
  private closed = false;
  private failure: Error | null = null;
  /** Gives back the data directory's lock (dir-lock.ts). */
  private unlock: () => Promise<void> = async () => {};
  private readonly flushIntervalMs: number;
  private readonly compactBytes: number;

  private constructor(
    private readonly dir: string,
    private readonly engine: Engine,
    private readonly log: LogFn,
    opts: PersistenceOptions,
  ) {
    this.flushIntervalMs = opts.flushIntervalMs ?? 50;
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
  }

  /** Loads the data directory into `engine` and starts journaling its changes. */
  static async open(dir: string, engine: Engine, log: LogFn, opts: PersistenceOptions = {}): Promise<Persistence> {
    await mkdir(dir, { recursive: true });
    const unlock = await lockDataDir(dir);
    const p = new Persistence(dir, engine, log, opts);
    p.unlock = unlock;
    try {
      await p.load();
      p.fh = await open(join(dir, journalName(p.seq)), "a");
    } catch (e) {
      await unlock();
      throw e;
    }
    engine.hooks.journal = (record) => p.append(record);
    return p;
  }

  private async load(): Promise<void> {
    const started = Date.now();
    let firstSeq = 0;
    let documents = 0;
    const snapPath = join(this.dir, SNAPSHOT);
    const snap = await readFile(snapPath).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? null : Promise.reject(e)));
    if (snap) {
      const { records, validBytes } = readFrames(snap);
      const header = records[0];
      const trailer = records[records.length - 1];
      if (validBytes !== snap.length || header?.kind !== "kairos-snapshot" || trailer?.kind !== "end") {
        throw new Error(`${snapPath} is damaged (valid up to byte ${validBytes} of ${snap.length}); refusing to start on partial data`);
      }
      firstSeq = Number(header.journalSeq);
      this.snapshotBytes = snap.length;
      let current: Collection | undefined;
      for (const r of records.slice(1, -1)) {
        if (r.kind === "coll") {
          current = this.engine.createCollection(r.db as string, r.name as string, (r.options as Doc) ?? {}, r.uuid as Binary);
          for (const spec of r.indexes as IndexSpec[]) current.createIndex(spec);
        } else if (r.kind === "doc") {
          current!.insert(r.d as Doc);
          documents++;
        }
      }
    }
    const files = (await readdir(this.dir))
      .map((f) => JOURNAL_RE.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ name: m[0], seq: Number(m[1]) }))
      .sort((a, b) => a.seq - b.seq);
    let replayed = 0;
    this.seq = firstSeq;
    for (const f of files) {
      const path = join(this.dir, f.name);
      if (f.seq < firstSeq) {
        await rm(path, { force: true }); // already contained in the snapshot
        continue;
      }
      const buf = await readFile(path);
      const { records, validBytes } = readFrames(buf);
      for (const r of records) {
        try {
          applyRecord(this.engine, r);
        } catch (e) {
          this.log("warn", "journal record could not be replayed", { file: f.name, error: (e as Error).message });
        }
      }
      replayed += records.length;
      if (validBytes < buf.length) {
        this.log("warn", "journal ends with a torn or damaged record; truncating it", {
          file: f.name,
          droppedBytes: buf.length - validBytes,
        });
        await truncate(path, validBytes);
      }
      this.seq = f.seq;
      this.journalBytes = validBytes;
    }
    this.log("info", "emulator data loaded", {
      dataDir: this.dir,
      snapshotDocuments: documents,
      journalRecords: replayed,
      ms: Date.now() - started,
    });
  }

  private append(record: Doc): void {
    if (this.closed) return;
    const f = frame(record);
    this.pending.push(f);
    this.pendingBytes += f.length;
    this.appended++;
    if (this.pendingBytes >= FLUSH_BYTES || this.pending.length >= FLUSH_RECORDS) this.scheduleFlush(0);
    else this.scheduleFlush(this.flushIntervalMs);
  }

  private scheduleFlush(delayMs: number): void {
    if (this.timer !== null) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
    this.timer.unref?.();
  }

  /** Writes and syncs everything queued so far. */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.flushNow()).catch((e: Error) => this.fail(e));
    return this.chain;
  }

  private fail(e: Error): void {
    this.failure = e;
    this.log("error", "journal write failed; later writes are not durable", { error: e.message });
    for (const w of this.waiters.splice(0)) w.reject(e);
  }

  private async flushNow(): Promise<void> {
    if (this.pending.length === 0 || !this.fh) return;
    const batch = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    const upTo = this.appended;
    this.pending = [];
    this.pendingBytes = 0;
    await this.fh.write(batch, 0, batch.length);
    await this.fh.datasync();
    this.journalBytes += batch.length;
    this.synced = upTo;
    this.waiters = this.waiters.filter((w) => (w.target <= upTo ? (w.resolve(), false) : true));
    if (!this.compacting && !this.closed && this.journalBytes > this.compactBytes && this.journalBytes > this.snapshotBytes) {
      this.compacting = this.compact().finally(() => (this.compacting = null));
    }
  }

  /**
   * Resolves once every change committed before the call is on disk (writeConcern j:true);
   * rejects if the journal cannot be written.
   */
  durable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.synced >= this.appended) return Promise.resolve();
    const target = this.appended;
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ target, resolve, reject }));
    this.scheduleFlush(0);
    return p;
  }

  /** Captures the state, switches to a new journal and writes a snapshot in the background. */
  compact(): Promise<void> {
    let state: CapturedCollection[] = [];
    let nextSeq = 0;
    // Capture and journal switch happen in one synchronous step inside the flush chain: the
    // capture and flushNow's taking of the queue run with no await between them, so every change
    // committed before the capture is in the old journal and every later one in the new.
    const switched = this.chain.then(async () => {
      state = capture(this.engine);
      nextSeq = this.seq + 1;
      await this.flushNow();
      await this.fh?.close();
      this.fh = await open(join(this.dir, journalName(nextSeq)), "a");
      this.seq = nextSeq;
      this.journalBytes = 0;
    });
    this.chain = switched.catch((e: Error) => this.fail(e));
    return switched.then(() => this.writeSnapshot(state, nextSeq)).catch((e: Error) => {
      this.log("error", "snapshot failed; the journal remains complete", { error: e.message });
    });
  }

  private async writeSnapshot(state: CapturedCollection[], journalSeq: number): Promise<void> {
    const started = Date.now();
    const tmp = join(this.dir, SNAPSHOT_TMP);
    const fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC);
    let bytes = 0;
    let documents = 0;
    try {
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      const put = async (record: Doc) => {
        const f = frame(record);
        chunk.push(f);
        chunkBytes += f.length;
        if (chunkBytes >= 4 * 1024 * 1024) await drain();
      };
      const drain = async () => {
        if (chunk.length === 0) return;
        const buf = Buffer.concat(chunk, chunkBytes);
        chunk = [];
        chunkBytes = 0;
        await fh.write(buf, 0, buf.length);
        bytes += buf.length;
      };
      await put({ kind: "kairos-snapshot", version: 1, journalSeq, createdAt: new Date() });
      for (const c of state) {
        await put({ kind: "coll", db: c.db, name: c.name, options: c.options, uuid: c.uuid, indexes: c.indexes as unknown as Doc[] });
        for (const d of c.docs) {
          await put({ kind: "doc", d });
          documents++;
        }
      }
      await put({ kind: "end", collections: state.length, documents });
      await drain();
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dir, SNAPSHOT));
    await syncDir(this.dir);
    this.snapshotBytes = bytes;
    for (const f of await readdir(this.dir)) {
      const m = JOURNAL_RE.exec(f);
      if (m && Number(m[1]) < journalSeq) await rm(join(this.dir, f), { force: true });
    }
    this.log("info", "emulator snapshot written", { documents, bytes, journalSeq, ms: Date.now() - started });
  }

  /** Flushes the journal, waits for a running snapshot, and closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    this.closed = true;
    this.engine.hooks.journal = null;
    await this.compacting;
    await this.chain;
    await this.fh?.close();
    this.fh = null;
    await this.unlock();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r").catch(() => null);
  if (!fh) return;
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    await fh.close();
  }
}

/**
 * Captures the output of the node's attempts and ships it to the log store in batches.
 *
 * Each attempt's stdout and stderr go, in the order they were read, into chunks tagged with their
 * stream and byte offset (one offset sequence per claim: a retry's log starts at 0 under its own
 * token). Consecutive output of one stream is merged into one chunk (up to 64 KiB). Every
 * `flushMs`, or as soon as `flushBytes` wait, ONE write carries the pending chunks of every
 * attempt on the node (LogWriter: three round trips however many runs print), so a hundred chatty
 * runs cost what one does. A flush in flight is never doubled: the next one waits for it.
 *
 * An attempt's log is capped (`maxBytes`): the output that fits is kept, then a SYSTEM chunk marks
 * the cut and the rest is only counted (a last SYSTEM chunk says how much was dropped). The
 * run's `outputTail` is kept apart, by process.ts, as before.
 */
import { isAscii } from "node:buffer";
import { StringDecoder } from "node:string_decoder";
import { coerceError, LogStream, logSegmentId } from "../domain/index.js";
import type { LogBatch, LogSettings, LogWriter } from "../core/index.js";
import { Periodic, type Logger } from "../support/index.js";

/** The largest chunk written (store/logs/chunks.ts reads back at most this far). */
const CHUNK_BYTES = 64 * 1024;

type Pending = LogBatch["chunks"][number];

export interface LogShipperDeps {
  writer: LogWriter;
  nodeId: string;
  log: Logger;
  settings: LogSettings;
  /** An attempt's complete log was stored (its archive may be made). */
  onEnded?: () => void;
}

export class LogCapture {
  /** Bytes given an offset so far: the next chunk's offset. */
  bytes = 0;
  truncated = false;
  dropped = 0;
  ended = false;
  /** The store refused the log (the claim no longer holds the run): nothing more is kept. */
  refused = false;
  pending: Pending[] = [];
  private readonly decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };

  constructor(
    readonly runId: string,
    readonly attempt: number,
    readonly token: number,
    private readonly shipper: LogShipper,
  ) {}

  /** Output read from the attempt's process. */
  write(chunk: Buffer, stream: "stdout" | "stderr"): void {
    if (this.ended || this.refused) return;
    const text = this.decoders[stream].write(chunk);
    // Whole ASCII (most output), nothing held from an earlier chunk: the bytes are the text's, no
    // need to encode it again. (Equal lengths alone are not enough: each invalid byte decodes to
    // one U+FFFD, three bytes.)
    this.add(text, stream === "stdout" ? LogStream.STDOUT : LogStream.STDERR, text.length === chunk.length && isAscii(chunk) ? chunk : undefined);
  }

  /** The process ended: the rest of its output (a partial character) and the cap's note, then the log is complete. */
  end(): void {
    if (this.ended) return;
    this.add(this.decoders.stdout.end(), LogStream.STDOUT);
    this.add(this.decoders.stderr.end(), LogStream.STDERR);
    if (this.dropped > 0) this.system(`[kairos] ${this.dropped} more bytes of output were dropped (the log of one attempt is capped at ${this.shipper.maxBytes} bytes)\n`);
    this.ended = true;
    this.shipper.flushSoon();
  }

  private add(text: string, stream: LogStream, bytes?: Buffer): void {
    if (text.length === 0) return;
    let data = bytes ?? Buffer.from(text, "utf8");
    if (this.truncated) {
      this.dropped += data.length;
      return;
    }
    const room = this.shipper.maxBytes - this.bytes;
    if (data.length > room) {
      let cut = Math.max(0, room);
      while (cut > 0 && (data[cut]! & 0xc0) === 0x80) cut--; // not inside a character
      this.dropped += data.length - cut;
      data = data.subarray(0, cut);
      this.push(data, stream);
      this.truncated = true;
      this.system(`\n[kairos] output truncated: this attempt's log reached its cap of ${this.shipper.maxBytes} bytes (setting KAIROS_LOG_MAX_BYTES); what follows is dropped. outputTail still shows the last 16 KiB.\n`);
      return;
    }
    this.push(data, stream);
  }

  private system(text: string): void {
    this.push(Buffer.from(text, "utf8"), LogStream.SYSTEM);
  }

  private push(data: Buffer, stream: LogStream): void {
    let at = 0;
    while (at < data.length) {
      const last = this.pending[this.pending.length - 1];
      const room = last && last.stream === stream ? CHUNK_BYTES - last.size : 0;
      let take = Math.min(data.length - at, room > 0 ? room : CHUNK_BYTES);
      // Cut only between characters (the decoder gives whole ones; keep them whole).
      while (at + take < data.length && take > 0 && (data[at + take]! & 0xc0) === 0x80) take--;
      if (take === 0) take = Math.min(data.length - at, CHUNK_BYTES); // a character longer than the room: new chunk
      const part = data.subarray(at, at + take);
      if (last && last.stream === stream && room >= part.length) {
        last.data += part.toString("utf8");
        last.size += part.length;
      } else {
        this.pending.push({ offset: this.bytes, size: part.length, stream, data: part.toString("utf8") });
      }
      this.bytes += part.length;
      this.shipper.added(part.length);
      at += take;
    }
  }
}

export class LogShipper {
  private readonly captures = new Map<string, LogCapture>();
  private flushing: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  private pendingBytes = 0;
  private soon = false;
  private failures = 0;

  /** Writes what is buffered every flushMs, also when no attempt's output reached flushBytes. */
  private readonly loop: Periodic;

  constructor(private readonly deps: LogShipperDeps) {
    this.loop = new Periodic(() => this.flush(), { everyMs: deps.settings.flushMs, log: deps.log, failure: "could not write run logs; trying again", cadence: "fixed-rate", unref: true });
  }

  get maxBytes(): number {
    return this.deps.settings.maxBytes;
  }

  /** A capture for one attempt (its claim's token). */
  open(runId: string, attempt: number, token: number): LogCapture {
    const c = new LogCapture(runId, attempt, token, this);
    this.captures.set(logSegmentId(runId, token), c);
    return c;
  }

  start(): void {
    this.loop.start();
  }

  /** Stops the timer after writing what is pending (once; a store that is down loses it). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.flush();
  }

  /** Output was buffered: past flushBytes it goes at once. */
  added(bytes: number): void {
    this.pendingBytes += bytes;
    if (this.pendingBytes >= this.deps.settings.flushBytes) this.flushSoon();
  }

  /** Flush in this event-loop turn's end (many attempts ending together share it). */
  flushSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      void this.flush();
    });
  }

  /**
   * Writes what every attempt has pending, in one batch; resolves when what was pending at the
   * call is written (or its write failed). While a flush is in flight, the next one is chained
   * behind it (one for all callers meanwhile).
   */
  flush(): Promise<void> {
    if (this.flushing) {
      this.next ??= this.flushing.then(() => {
        this.next = null;
        return this.flush();
      });
      return this.next;
    }
    this.flushing = this.write().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async write(): Promise<void> {
    const taken: Array<{ capture: LogCapture; chunks: Pending[]; ended: boolean }> = [];
    const batches: LogBatch[] = [];
    for (const [id, c] of this.captures) {
      if (c.pending.length === 0 && !c.ended) continue;
      if (c.ended && c.bytes === 0) {
        this.captures.delete(id); // printed nothing: no log at all (most runs of a busy node)
        continue;
      }
      const chunks = c.pending;
      c.pending = [];
      taken.push({ capture: c, chunks, ended: c.ended });
      batches.push({ runId: c.runId, attempt: c.attempt, token: c.token, nodeId: this.deps.nodeId, chunks, bytes: c.bytes, truncated: c.truncated, ended: c.ended });
    }
    this.pendingBytes = 0;
    if (batches.length === 0) return;
    let refused: Set<string>;
    try {
      refused = await this.deps.writer.write(batches);
      this.failures = 0;
    } catch (e) {
      // Kept for the next flush, in front of what came since (their offsets are fixed).
      for (const t of taken) t.capture.pending = [...t.chunks, ...t.capture.pending];
      if (this.failures++ % 20 === 0) this.deps.log.warn({ err: coerceError(e), runs: batches.length }, "could not write run logs; retrying with the next flush");
      return;
    }
    let ended = false;
    for (const t of taken) {
      const id = logSegmentId(t.capture.runId, t.capture.token);
      if (refused.has(id)) {
        t.capture.refused = true;
        t.capture.pending = [];
        this.captures.delete(id);
        this.deps.log.warn({ runId: t.capture.runId, token: t.capture.token }, "log refused: the attempt's claim no longer holds the run");
      } else if (t.ended && t.capture.pending.length === 0) {
        this.captures.delete(id);
        ended = true;
      }
    }
    if (ended) this.deps.onEnded?.();
  }
}

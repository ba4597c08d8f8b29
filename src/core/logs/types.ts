/** What crosses between the log's writer (executor), its store, its bus channel and its readers. */
import type { LogStream } from "../../domain/index.js";

/** One chunk as readers get it. */
export interface LogChunk {
  runId: string;
  attempt: number;
  token: number;
  /** Byte offset of `data` in the attempt's log. */
  offset: number;
  /** Bytes of `data` as UTF-8: the next chunk is at offset + size. */
  size: number;
  stream: LogStream;
  data: string;
}

/** What an executor writes for one attempt in one flush. */
export interface LogBatch {
  runId: string;
  attempt: number;
  /** The attempt's claim: chunks are accepted only while it holds the run (see LogWriter). */
  token: number;
  nodeId: string;
  chunks: Array<Pick<LogChunk, "offset" | "size" | "stream" | "data">>;
  /** The log's size after these chunks. */
  bytes: number;
  truncated: boolean;
  /** The attempt's output is complete with this batch. */
  ended: boolean;
}

/**
 * The blob store, as logs use it (the composition root adapts the artifacts' BlobStore to it):
 * objects by key, and short-lived download links.
 */
export interface LogBlobs {
  put(key: string, body: Buffer, meta: { contentType: string; contentEncoding?: string }): Promise<void>;
  /** The object's bytes; null when there is none. */
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
  /** A presigned GET link valid for `ttlSeconds`. */
  presignGet(key: string, ttlSeconds: number, filename: string): Promise<string>;
}

/** A bus message on a run's log channel: the chunks one flush stored, or that the log ended. */
export interface LogNotice {
  runId: string;
  attempt: number;
  token: number;
  chunks: LogBatch["chunks"];
  ended: boolean;
}

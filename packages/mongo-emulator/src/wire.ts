/**
 * MongoDB wire-protocol framing: parsing of OP_MSG and OP_QUERY requests and encoding of
 * OP_MSG and OP_REPLY responses. Pure functions over Buffers; the socket lives in server.ts.
 *
 * Every message starts with a 16-byte header: int32 messageLength (including the header),
 * int32 requestID, int32 responseTo, int32 opCode, all little-endian.
 */
import { BSON } from "bson";
import { decodeExact } from "./decode.js";
import { ProtocolError } from "./errors.js";
import { normalizeInPlace, type Doc } from "./values.js";

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_GET_MORE = 2005;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const HEADER_SIZE = 16;
/** Largest message accepted; the same limit a real server advertises as maxMessageSizeBytes. */
export const MAX_MESSAGE_SIZE = 48_000_000;
export const MAX_BSON_SIZE = 16 * 1024 * 1024;

const FLAG_CHECKSUM = 1 << 0;
const FLAG_MORE_TO_COME = 1 << 1;
const FLAG_EXHAUST_ALLOWED = 1 << 16;
/** Bits 0-15 are "required": a receiver that does not know one must fail the message. */
const KNOWN_REQUIRED_BITS = FLAG_CHECKSUM | FLAG_MORE_TO_COME;

/**
 * Documents are decoded straight into exact form where they hold only common types (decode.ts);
 * others without promoting numbers so their BSON types survive, then normalized (see values.ts).
 */
const DESERIALIZE_OPTIONS = { promoteValues: false, promoteBuffers: false, bsonRegExp: false } as const;

export interface OpMsgRequest {
  kind: "msg";
  requestId: number;
  /** The client expects no reply (w:0 writes and similar fire-and-forget commands). */
  moreToCome: boolean;
  body: Doc;
  /** Kind-1 sections: identifier (e.g. `documents`, `updates`, `deletes`) → documents. */
  sequences: Map<string, Doc[]>;
}

export interface OpQueryRequest {
  kind: "query";
  requestId: number;
  fullCollectionName: string;
  query: Doc;
}

export interface UnsupportedRequest {
  kind: "unsupported";
  requestId: number;
  opCode: number;
}

export type Request = OpMsgRequest | OpQueryRequest | UnsupportedRequest;

/** Reads the declared length of the message starting at `offset`, validating its bounds. */
export function messageLength(buf: Buffer, offset: number): number {
  const len = buf.readInt32LE(offset);
  if (len < HEADER_SIZE || len > MAX_MESSAGE_SIZE) {
    throw new ProtocolError(`invalid message length ${len} (allowed ${HEADER_SIZE}..${MAX_MESSAGE_SIZE})`);
  }
  return len;
}

/** Parses one complete message (header included). Throws ProtocolError if it is malformed. */
export function parseMessage(msg: Buffer): Request {
  const requestId = msg.readInt32LE(4);
  const opCode = msg.readInt32LE(12);
  switch (opCode) {
    case OP_MSG:
      return parseOpMsg(msg, requestId);
    case OP_QUERY:
      return parseOpQuery(msg, requestId);
    default:
      return { kind: "unsupported", requestId, opCode };
  }
}

function readDocument(msg: Buffer, offset: number, end: number): { doc: Doc; next: number } {
  if (offset + 5 > end) throw new ProtocolError("truncated BSON document");
  const size = msg.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError(`BSON document length ${size} exceeds its section`);
  const bytes = msg.subarray(offset, offset + size);
  let doc = decodeExact(bytes);
  if (doc === undefined) {
    try {
      doc = BSON.deserialize(bytes, DESERIALIZE_OPTIONS) as Doc;
    } catch (e) {
      throw new ProtocolError(`invalid BSON: ${(e as Error).message}`);
    }
    normalizeInPlace(doc);
  }
  return { doc, next: offset + size };
}

function readCString(msg: Buffer, offset: number, end: number): { value: string; next: number } {
  const zero = msg.indexOf(0, offset);
  if (zero < 0 || zero >= end) throw new ProtocolError("unterminated C string");
  return { value: msg.toString("utf8", offset, zero), next: zero + 1 };
}

function parseOpMsg(msg: Buffer, requestId: number): OpMsgRequest {
  if (msg.length < HEADER_SIZE + 5) throw new ProtocolError("OP_MSG too short");
  const flags = msg.readUInt32LE(HEADER_SIZE);
  if ((flags & 0xffff & ~KNOWN_REQUIRED_BITS) !== 0) {
    throw new ProtocolError(`OP_MSG has unknown required flag bits 0x${flags.toString(16)}`);
  }
  let end = msg.length;
  if (flags & FLAG_CHECKSUM) {
    end -= 4;
    if (end < HEADER_SIZE + 5) throw new ProtocolError("OP_MSG too short for its checksum");
    const expected = msg.readUInt32LE(end);
    const actual = crc32c(msg.subarray(0, end));
    if (expected !== actual) throw new ProtocolError("OP_MSG checksum mismatch");
  }
  let body: Doc | null = null;
  const sequences = new Map<string, Doc[]>();
  let pos = HEADER_SIZE + 4;
  while (pos < end) {
    const kind = msg[pos++];
    if (kind === 0) {
      if (body !== null) throw new ProtocolError("OP_MSG has more than one body section");
      const r = readDocument(msg, pos, end);
      body = r.doc;
      pos = r.next;
    } else if (kind === 1) {
      if (pos + 4 > end) throw new ProtocolError("truncated document sequence");
      const size = msg.readInt32LE(pos);
      const seqEnd = pos + size;
      if (size < 5 || seqEnd > end) throw new ProtocolError(`document sequence length ${size} exceeds the message`);
      const id = readCString(msg, pos + 4, seqEnd);
      if (sequences.has(id.value)) throw new ProtocolError(`duplicate document sequence '${id.value}'`);
      const docs: Doc[] = [];
      let p = id.next;
      while (p < seqEnd) {
        const r = readDocument(msg, p, seqEnd);
        docs.push(r.doc);
        p = r.next;
      }
      sequences.set(id.value, docs);
      pos = seqEnd;
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
    }
  }
  if (body === null) throw new ProtocolError("OP_MSG without a body section");
  return { kind: "msg", requestId, moreToCome: (flags & FLAG_MORE_TO_COME) !== 0, body, sequences };
}

function parseOpQuery(msg: Buffer, requestId: number): OpQueryRequest {
  let pos = HEADER_SIZE + 4; // skip flags
  const ns = readCString(msg, pos, msg.length);
  pos = ns.next + 8; // numberToSkip, numberToReturn
  const q = readDocument(msg, pos, msg.length);
  // Legacy wrapping: {$query: {...}, $readPreference: ...}
  const query = typeof q.doc.$query === "object" && q.doc.$query !== null ? (q.doc.$query as Doc) : q.doc;
  return { kind: "query", requestId, fullCollectionName: ns.value, query };
}

let nextResponseId = 1;

function header(buf: Buffer, length: number, responseTo: number, opCode: number): void {
  buf.writeInt32LE(length, 0);
  buf.writeInt32LE(nextResponseId, 4);
  nextResponseId = (nextResponseId + 1) & 0x7fffffff || 1;
  buf.writeInt32LE(responseTo, 8);
  buf.writeInt32LE(opCode, 12);
}

/** An OP_MSG reply with a single body section and no flags. */
export function encodeMsgReply(responseTo: number, doc: Doc): Buffer {
  const body = BSON.serialize(doc);
  const out = Buffer.allocUnsafe(HEADER_SIZE + 5 + body.length);
  header(out, out.length, responseTo, OP_MSG);
  out.writeUInt32LE(0, HEADER_SIZE);
  out[HEADER_SIZE + 4] = 0;
  out.set(body, HEADER_SIZE + 5);
  return out;
}

export const REPLY_QUERY_FAILURE = 2;

/** An OP_REPLY carrying one document, answering a legacy OP_QUERY. */
export function encodeOpReply(responseTo: number, doc: Doc, responseFlags = 0): Buffer {
  const body = BSON.serialize(doc);
  const out = Buffer.allocUnsafe(HEADER_SIZE + 20 + body.length);
  header(out, out.length, responseTo, OP_REPLY);
  out.writeInt32LE(responseFlags, HEADER_SIZE);
  out.writeBigInt64LE(0n, HEADER_SIZE + 4); // cursorID
  out.writeInt32LE(0, HEADER_SIZE + 12); // startingFrom
  out.writeInt32LE(1, HEADER_SIZE + 16); // numberReturned
  out.set(body, HEADER_SIZE + 20);
  return out;
}

/** An OP_MSG request, as a client would send it (used by tests and the bench to craft frames). */
export function encodeMsgRequest(requestId: number, doc: Doc, flags = 0): Buffer {
  const body = BSON.serialize(doc);
  const withChecksum = (flags & FLAG_CHECKSUM) !== 0;
  const out = Buffer.allocUnsafe(HEADER_SIZE + 5 + body.length + (withChecksum ? 4 : 0));
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(0, 8);
  out.writeInt32LE(OP_MSG, 12);
  out.writeUInt32LE(flags, HEADER_SIZE);
  out[HEADER_SIZE + 4] = 0;
  out.set(body, HEADER_SIZE + 5);
  if (withChecksum) out.writeUInt32LE(crc32c(out.subarray(0, out.length - 4)), out.length - 4);
  return out;
}

export const MSG_FLAGS = { checksumPresent: FLAG_CHECKSUM, moreToCome: FLAG_MORE_TO_COME, exhaustAllowed: FLAG_EXHAUST_ALLOWED };

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli), the checksum OP_MSG uses. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC32C_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

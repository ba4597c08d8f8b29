/**
 * Decoding of incoming BSON documents straight into the exact form (see values.ts), for the
 * types scheduler documents (and the driver's command envelopes) are made of: double, string,
 * document, array, binary, ObjectId, bool, date, null, int32 and int64. Decoding with the `bson`
 * package (numbers kept as wrappers so their types survive) and then normalizing allocates a
 * wrapper for every number and walks each document twice; for an insertMany of 1,000 run
 * documents that was most of the command's time.
 *
 * The result is exactly what `BSON.deserialize(bytes, {promoteValues: false, ...})` followed by
 * `normalizeInPlace` gives (test/decode.test.ts holds the two to the same answers). Anything
 * else — another BSON type, a key that is not plain UTF-8, a `__proto__` or `$ref` key (DBRef),
 * a string whose UTF-8 may be invalid, a malformed length — makes it return undefined, and the
 * caller takes the `bson` path, which decodes the rarer types and reports malformed input.
 */
import { Binary, Double, Long, ObjectId, UUID } from "bson";
import type { Doc } from "./values.js";

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const TWO_PWR_32 = 4294967296;

/** Thrown inside the decoder to give up; never escapes decodeExact. */
const GIVE_UP = Symbol("give up");

/** The document in `buf` (exactly one, filling it) in exact form, or undefined to use the `bson` path. */
export function decodeExact(buf: Buffer): Doc | undefined {
  try {
    const doc = readContainer(buf, 0, false) as Doc;
    return cursor === buf.length ? doc : undefined;
  } catch {
    // GIVE_UP, or a RangeError (a stack overflow on deep nesting): the bson path decides.
    return undefined;
  }
}

/** Where readContainer stopped: the byte after the container it read. */
let cursor = 0;

function int32(buf: Buffer, i: number): number {
  return buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24);
}

/**
 * A string of `buf[start, end)`. Short ASCII strings (statuses, small names) are built here,
 * which is cheaper than a call into the runtime; up to 12 characters V8 makes each step a flat
 * string, beyond that a chain of concatenations, so longer ones are decoded by the runtime.
 * Where the bytes may not be valid UTF-8 it gives up.
 */
function utf8(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n <= 12) {
    let s = "";
    for (let i = start; i < end; i++) {
      const c = buf[i];
      if (c > 127) return utf8Slow(buf, start, end);
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8Slow(buf, start, end);
}

/**
 * Field names repeat across the documents of a batch (1,000 runs with the same 40 fields): a
 * name already seen is taken from this table (by a hash of its bytes, checked byte for byte)
 * rather than built again.
 */
const NAMES = new Array<string | undefined>(1024);

function fieldName(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n > 32) return utf8(buf, start, end);
  let h = n;
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c > 127) return utf8Slow(buf, start, end);
    h = (Math.imul(h, 31) + c) | 0;
  }
  const slot = h & 1023;
  const hit = NAMES[slot];
  if (hit !== undefined && hit.length === n) {
    let same = true;
    for (let j = 0; j < n; j++) {
      if (hit.charCodeAt(j) !== buf[start + j]) {
        same = false;
        break;
      }
    }
    if (same) return hit;
  }
  const name = utf8(buf, start, end);
  NAMES[slot] = name;
  return name;
}

function utf8Slow(buf: Buffer, start: number, end: number): string {
  const s = buf.toString("utf8", start, end);
  // Invalid sequences decode to U+FFFD; the bson path rejects them (or keeps a real U+FFFD).
  if (s.indexOf("\ufffd") >= 0) throw GIVE_UP;
  return s;
}

function readContainer(buf: Buffer, start: number, isArray: boolean): Doc | unknown[] {
  if (start + 5 > buf.length) throw GIVE_UP;
  const size = int32(buf, start);
  const end = start + size;
  if (size < 5 || end > buf.length || buf[end - 1] !== 0) throw GIVE_UP;
  const arr: unknown[] | null = isArray ? [] : null;
  const obj: Doc | null = isArray ? null : {};
  let pos = start + 4;
  for (;;) {
    if (pos >= end) throw GIVE_UP;
    const type = buf[pos++];
    if (type === 0) break;
    let zero = pos;
    while (zero < end && buf[zero] !== 0) zero++;
    if (zero >= end) throw GIVE_UP;
    let key = "";
    if (!isArray) {
      key = fieldName(buf, pos, zero);
      if (key === "__proto__" || key === "$ref") throw GIVE_UP;
    }
    pos = zero + 1;
    let value: unknown;
    switch (type) {
      case 0x01: {
        if (pos + 8 > end) throw GIVE_UP;
        const n = buf.readDoubleLE(pos);
        pos += 8;
        // A Double whose value would serialize as an Int32 keeps its wrapper (values.ts).
        value = Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? new Double(n) : n;
        break;
      }
      case 0x02: {
        if (pos + 4 > end) throw GIVE_UP;
        const len = int32(buf, pos);
        pos += 4;
        if (len <= 0 || len > end - pos || buf[pos + len - 1] !== 0) throw GIVE_UP;
        value = utf8(buf, pos, pos + len - 1);
        pos += len;
        break;
      }
      case 0x03:
      case 0x04:
        value = readContainer(buf, pos, type === 0x04);
        if (cursor > end) throw GIVE_UP;
        pos = cursor;
        break;
      case 0x05: {
        // Binary (the driver's session id is a UUID in every command), as bson builds it; the
        // old subtype 2, with its inner length, is left to bson.
        if (pos + 5 > end) throw GIVE_UP;
        const len = int32(buf, pos);
        const sub = buf[pos + 4];
        pos += 5;
        if (len < 0 || len > end - pos || sub === 2) throw GIVE_UP;
        const bin = new Binary(buf.subarray(pos, pos + len), sub);
        value = sub === 4 && UUID.isValid(bin) ? bin.toUUID() : bin;
        pos += len;
        break;
      }
      case 0x07:
        if (pos + 12 > end) throw GIVE_UP;
        value = new ObjectId(buf.subarray(pos, pos + 12));
        pos += 12;
        break;
      case 0x08: {
        const b = buf[pos++];
        if (b !== 0 && b !== 1) throw GIVE_UP;
        value = b === 1;
        break;
      }
      case 0x09: {
        if (pos + 8 > end) throw GIVE_UP;
        const lo = int32(buf, pos);
        const hi = int32(buf, pos + 4);
        pos += 8;
        value = new Date(hi * TWO_PWR_32 + (lo >>> 0));
        break;
      }
      case 0x0a:
        value = null;
        break;
      case 0x10:
        if (pos + 4 > end) throw GIVE_UP;
        value = int32(buf, pos);
        pos += 4;
        break;
      case 0x12: {
        if (pos + 8 > end) throw GIVE_UP;
        value = new Long(int32(buf, pos), int32(buf, pos + 4));
        pos += 8;
        break;
      }
      default:
        throw GIVE_UP;
    }
    if (arr !== null) arr.push(value);
    else obj![key] = value;
  }
  if (pos !== end) throw GIVE_UP;
  cursor = end;
  return arr ?? obj!;
}

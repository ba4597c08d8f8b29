/**
 * The byte stream → message split (src/framing.ts): whatever the chunk boundaries (inside the
 * length header, inside a body, several messages in one chunk), the same whole messages come out
 * in order; a bad declared length fails however it arrives.
 */
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/errors.js";
import { MessageFramer } from "../src/framing.js";
import { encodeMsgRequest } from "../src/wire.js";

/** A deterministic pseudo-random generator, so a failing split can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const messages = [
  encodeMsgRequest(1, { ping: 1, $db: "admin" }),
  encodeMsgRequest(2, { insert: "c", documents: Array.from({ length: 300 }, (_, i) => ({ _id: i, pad: "x".repeat(100) })), $db: "t" }),
  encodeMsgRequest(3, { buildInfo: 1, $db: "admin" }),
  encodeMsgRequest(4, { ping: 1, $db: "admin" }),
];
const stream = Buffer.concat(messages);

function feed(framer: MessageFramer, chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) out.push(...framer.push(c).map((m) => Buffer.from(m)));
  return out;
}

describe("MessageFramer", () => {
  it("returns the same messages for any split of the stream", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = rng(seed);
      const chunks: Buffer[] = [];
      // Small seeds cut into 1-3 byte pieces near the headers; others into pieces of up to 64 KiB.
      const max = seed % 4 === 0 ? 3 : seed % 4 === 1 ? 17 : 65536;
      for (let pos = 0; pos < stream.length; ) {
        const n = Math.min(stream.length - pos, 1 + Math.floor(next() * max));
        chunks.push(Buffer.from(stream.subarray(pos, pos + n)));
        pos += n;
      }
      const out = feed(new MessageFramer(), chunks);
      expect(out.length, `seed ${seed}`).toBe(messages.length);
      out.forEach((m, i) => expect(m.equals(messages[i]), `seed ${seed}, message ${i}`).toBe(true));
    }
  });

  it("hands out each message once its last byte arrives, not before", () => {
    const framer = new MessageFramer();
    const big = messages[1];
    expect(framer.push(big.subarray(0, 2))).toEqual([]);
    expect(framer.push(big.subarray(2, 1000))).toEqual([]);
    expect(framer.push(big.subarray(1000, big.length - 1))).toEqual([]);
    const done = framer.push(Buffer.concat([big.subarray(big.length - 1), messages[0].subarray(0, 5)]));
    expect(done.length).toBe(1);
    expect(done[0].equals(big)).toBe(true);
    const rest = framer.push(messages[0].subarray(5));
    expect(rest.length).toBe(1);
    expect(rest[0].equals(messages[0])).toBe(true);
  });

  it("refuses a bad declared length, whole or split inside the header", () => {
    const bad = Buffer.alloc(16);
    bad.writeInt32LE(3, 0);
    expect(() => new MessageFramer().push(bad)).toThrow(ProtocolError);
    const split = new MessageFramer();
    expect(split.push(bad.subarray(0, 1))).toEqual([]);
    expect(split.push(bad.subarray(1, 2))).toEqual([]);
    expect(() => split.push(bad.subarray(2))).toThrow(ProtocolError);
    const huge = Buffer.alloc(8);
    huge.writeInt32LE(0x7fffffff, 0);
    const after = new MessageFramer();
    expect(after.push(messages[0].subarray(0, 10))).toEqual([]);
    expect(() => after.push(Buffer.concat([messages[0].subarray(10), huge]))).toThrow(ProtocolError);
  });
});

/**
 * The log capture's byte contract (src/executor/log-capture.ts): every chunk's `size` is the UTF-8
 * byte length of its `data`, and the sizes add up to the log's byte count, whatever a program
 * prints. A chunk of invalid bytes decodes to as many U+FFFD as it has bytes, so its text has the
 * chunk's length without being ASCII: taking the raw bytes as the text's (a shortcut meant for
 * ASCII) broke the contract, seen as a log 2 bytes longer than its chunks in the attack tests.
 */
import { describe, expect, it } from "vitest";
import { LogCapture, type LogShipper } from "../../src/executor/log-capture.js";

function capture(): LogCapture {
  const shipper = { maxBytes: 1 << 20, added: () => {}, flushSoon: () => {} } as unknown as LogShipper;
  return new LogCapture("run", 1, 1, shipper);
}

function checkContract(c: LogCapture): void {
  let at = 0;
  for (const p of c.pending) {
    expect(p.offset).toBe(at);
    expect(Buffer.byteLength(p.data, "utf8"), `chunk at ${p.offset}`).toBe(p.size);
    at += p.size;
  }
}

describe("the log capture's byte contract", () => {
  it("holds for chunks of invalid bytes whose text has the chunk's length", () => {
    const c = capture();
    c.write(Buffer.from([0xff, 0xfe]), "stdout"); // two U+FFFD: 2 characters, 6 bytes
    c.write(Buffer.from("ok\n"), "stdout");
    c.write(Buffer.from([0xe2, 0x82]), "stderr"); // an unfinished character, held by the decoder
    c.write(Buffer.from([0x41]), "stderr"); // "A" after it: U+FFFD then A, 2 characters from 1 byte
    c.end();
    checkContract(c);
    expect(c.pending.map((p) => p.data).join("")).toBe("\ufffd\ufffdok\n\ufffdA");
  });

  it("holds for random bytes split at random places", () => {
    for (let round = 0; round < 50; round++) {
      const c = capture();
      for (let i = 0; i < 20; i++) {
        const b = Buffer.alloc(1 + Math.floor(Math.random() * 8));
        for (let j = 0; j < b.length; j++) b[j] = Math.random() < 0.5 ? 0x80 + Math.floor(Math.random() * 0x80) : Math.floor(Math.random() * 0x80);
        c.write(b, Math.random() < 0.5 ? "stdout" : "stderr");
      }
      c.end();
      checkContract(c);
    }
  });
});

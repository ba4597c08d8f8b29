/**
 * Wire-level behaviour, with hand-made frames on raw sockets: malformed input closes only the
 * offending connection, OP_MSG flags (checksum, moreToCome) and the legacy OP_QUERY handshake.
 * Emulator-only: these probe the emulator's framing, not MongoDB's semantics.
 */
import { Socket } from "node:net";
import { BSON } from "bson";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../src/index.js";
import { parseEmulatorArgs } from "../src/cli.js";
import { encodeMsgRequest, MSG_FLAGS, OP_MSG, OP_QUERY, OP_REPLY } from "../src/wire.js";
import { EMULATOR_ONLY, ON_EMULATOR } from "./target.js";

let em: RunningEmulator;
let client: MongoClient;

/** A raw connection that collects whole reply frames. */
class Raw {
  readonly socket: Socket;
  private buf = Buffer.alloc(0);
  private waiting: ((frame: Buffer) => void)[] = [];
  readonly frames: Buffer[] = [];
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = new Socket();
    this.socket.connect(port, "127.0.0.1");
    this.closed = new Promise((resolve) => this.socket.once("close", () => resolve()));
    this.socket.on("error", () => undefined);
    this.socket.on("data", (chunk) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 4 && this.buf.length >= this.buf.readInt32LE(0)) {
        const len = this.buf.readInt32LE(0);
        const frame = this.buf.subarray(0, len);
        this.buf = this.buf.subarray(len);
        const w = this.waiting.shift();
        if (w) w(frame);
        else this.frames.push(frame);
      }
    });
  }

  next(): Promise<Buffer> {
    const f = this.frames.shift();
    if (f) return Promise.resolve(f);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async command(doc: Record<string, unknown>, flags = 0): Promise<Record<string, unknown>> {
    this.socket.write(encodeMsgRequest(1, doc, flags));
    return msgBody(await this.next());
  }

  close(): void {
    this.socket.destroy();
  }
}

function msgBody(frame: Buffer): Record<string, unknown> {
  expect(frame.readInt32LE(12)).toBe(OP_MSG);
  expect(frame[20]).toBe(0);
  return BSON.deserialize(frame.subarray(21));
}

async function stillServes(): Promise<void> {
  expect((await client.db("admin").command({ ping: 1 })).ok).toBe(1);
}

beforeAll(async () => {
  if (!ON_EMULATOR) return;
  em = await startEmulator();
  client = await new MongoClient(em.uri).connect();
});
afterAll(async () => {
  await client?.close();
  await em?.stop();
});

describe.skipIf(!ON_EMULATOR)(`wire protocol ${EMULATOR_ONLY}`, () => {
  it("answers OP_MSG commands sent in fragments and back-to-back", async () => {
    const raw = new Raw(em.port);
    const msg = encodeMsgRequest(7, { ping: 1, $db: "admin" });
    for (const byte of msg) raw.socket.write(Buffer.from([byte]));
    expect(await raw.next().then(msgBody)).toMatchObject({ ok: 1 });
    raw.socket.write(Buffer.concat([encodeMsgRequest(8, { ping: 1, $db: "admin" }), encodeMsgRequest(9, { buildInfo: 1, $db: "admin" })]));
    const a = await raw.next();
    const b = await raw.next();
    expect(a.readInt32LE(8)).toBe(8);
    expect(b.readInt32LE(8)).toBe(9);
    expect(msgBody(b).version).toBeDefined();
    raw.close();
  });

  it("closes only the connection that sends a bad length", async () => {
    const raw = new Raw(em.port);
    const bad = Buffer.alloc(16);
    bad.writeInt32LE(3, 0);
    raw.socket.write(bad);
    await raw.closed;
    await stillServes();
  });

  it("closes only the connection that sends invalid BSON", async () => {
    const raw = new Raw(em.port);
    const msg = encodeMsgRequest(1, { ping: 1, $db: "admin" });
    msg.writeInt32LE(9999, 21); // the body document claims more bytes than it has
    raw.socket.write(msg);
    await raw.closed;
    await stillServes();
  });

  it("closes the connection on unknown required flag bits", async () => {
    const raw = new Raw(em.port);
    raw.socket.write(encodeMsgRequest(1, { ping: 1, $db: "admin" }, 1 << 4));
    await raw.closed;
    await stillServes();
  });

  it("verifies OP_MSG checksums", async () => {
    const raw = new Raw(em.port);
    expect(await raw.command({ ping: 1, $db: "admin" }, MSG_FLAGS.checksumPresent)).toMatchObject({ ok: 1 });
    const corrupt = encodeMsgRequest(2, { ping: 1, $db: "admin" }, MSG_FLAGS.checksumPresent);
    corrupt[corrupt.length - 1] ^= 0xff;
    raw.socket.write(corrupt);
    await raw.closed;
    await stillServes();
  });

  it("sends no reply for moreToCome (w:0) writes", async () => {
    const raw = new Raw(em.port);
    raw.socket.write(encodeMsgRequest(1, { insert: "fire", documents: [{ _id: 1 }], writeConcern: { w: 0 }, $db: "proto" }, MSG_FLAGS.moreToCome));
    const reply = await raw.command({ count: "fire", $db: "proto" });
    expect(reply).toMatchObject({ n: 1, ok: 1 }); // the first frame back answers the count
    raw.close();
  });

  it("handles document sequences (kind 1 sections)", async () => {
    const docs = [{ _id: 1 }, { _id: 2 }].map((d) => Buffer.from(BSON.serialize(d)));
    const id = Buffer.from("documents\0");
    const seqLen = 4 + id.length + docs.reduce((s, d) => s + d.length, 0);
    const body = Buffer.from(BSON.serialize({ insert: "seq", $db: "proto" }));
    const total = 16 + 4 + 1 + body.length + 1 + seqLen;
    const msg = Buffer.alloc(total);
    msg.writeInt32LE(total, 0);
    msg.writeInt32LE(5, 4);
    msg.writeInt32LE(OP_MSG, 12);
    let pos = 21;
    body.copy(msg, pos);
    pos += body.length;
    msg[pos++] = 1;
    msg.writeInt32LE(seqLen, pos);
    pos += 4;
    id.copy(msg, pos);
    pos += id.length;
    for (const d of docs) {
      d.copy(msg, pos);
      pos += d.length;
    }
    const raw = new Raw(em.port);
    raw.socket.write(msg);
    expect(msgBody(await raw.next())).toMatchObject({ n: 2, ok: 1 });
    raw.close();
  });

  it("answers the legacy OP_QUERY isMaster handshake and refuses other OP_QUERY commands", async () => {
    const raw = new Raw(em.port);
    const opQuery = (ns: string, query: Record<string, unknown>) => {
      const q = Buffer.from(BSON.serialize(query));
      const nsBuf = Buffer.from(ns + "\0");
      const msg = Buffer.alloc(16 + 4 + nsBuf.length + 8 + q.length);
      msg.writeInt32LE(msg.length, 0);
      msg.writeInt32LE(11, 4);
      msg.writeInt32LE(OP_QUERY, 12);
      nsBuf.copy(msg, 20);
      msg.writeInt32LE(-1, 20 + nsBuf.length + 4);
      q.copy(msg, 20 + nsBuf.length + 8);
      return msg;
    };
    raw.socket.write(opQuery("admin.$cmd", { isMaster: 1, helloOk: true }));
    const reply = await raw.next();
    expect(reply.readInt32LE(12)).toBe(OP_REPLY);
    expect(reply.readInt32LE(8)).toBe(11);
    const doc = BSON.deserialize(reply.subarray(36));
    expect(doc).toMatchObject({ ismaster: true, helloOk: true, ok: 1 });
    expect(doc.setName).toBeUndefined();
    raw.socket.write(opQuery("admin.$cmd", { find: "x" }));
    expect(BSON.deserialize((await raw.next()).subarray(36))).toMatchObject({ ok: 0, code: 352 });
    raw.close();
  });

  it("refuses OP_COMPRESSED with an error reply (no compressor is ever negotiated)", async () => {
    const raw = new Raw(em.port);
    const msg = Buffer.alloc(16 + 9 + 4);
    msg.writeInt32LE(msg.length, 0);
    msg.writeInt32LE(21, 4);
    msg.writeInt32LE(2012, 12);
    raw.socket.write(msg);
    const reply = msgBody(await raw.next());
    expect(reply).toMatchObject({ ok: 0, code: 2 });
    expect(String(reply.errmsg)).toContain("OP_COMPRESSED");
    expect(await raw.command({ ping: 1, $db: "admin" })).toMatchObject({ ok: 1 });
    raw.close();
  });

  it("requires $db and reports errors without closing", async () => {
    const raw = new Raw(em.port);
    expect(await raw.command({ ping: 1 })).toMatchObject({ ok: 0, code: 40571 });
    expect(await raw.command({ nosuch: 1, $db: "x" })).toMatchObject({ ok: 0, code: 59, codeName: "CommandNotFound" });
    expect(await raw.command({ ping: 1, $db: "admin" })).toMatchObject({ ok: 1 });
    raw.close();
  });
});

describe("kairos emulator flags", () => {
  it("parses flags and names bad ones", () => {
    expect(parseEmulatorArgs([])).toEqual({ port: 27017, host: "127.0.0.1", dataDir: undefined, help: false });
    expect(parseEmulatorArgs(["--port", "0", "--host", "0.0.0.0", "--data-dir=/tmp/x"])).toEqual({ port: 0, host: "0.0.0.0", dataDir: "/tmp/x", help: false });
    expect(() => parseEmulatorArgs(["--port", "abc"])).toThrow(/--port must be an integer from 0 to 65535/);
    expect(() => parseEmulatorArgs(["--port"])).toThrow(/--port needs a value/);
    expect(() => parseEmulatorArgs(["--verbose"])).toThrow(/unknown flag '--verbose'.*allowed: --port N, --host H, --data-dir DIR, --help/);
    expect(parseEmulatorArgs(["--help"]).help).toBe(true);
  });
});

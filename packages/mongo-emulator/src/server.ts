/**
 * The TCP side: accepts connections, splits the byte stream into messages, runs each command
 * and writes the reply. A malformed message closes only the connection that sent it.
 */
import { createServer, type Server, type Socket } from "node:net";
import { runCommand, OP_QUERY_COMMANDS, type ConnectionInfo, type ServerInfo } from "./commands/index.js";
import type { Engine } from "./engine.js";
import { commandError, ErrorCode, ProtocolError } from "./errors.js";
import { MessageFramer } from "./framing.js";
import type { LogFn, Persistence } from "./persistence.js";
import { isPlainObject, type Doc } from "./values.js";
import {
  encodeMsgReply,
  encodeOpReply,
  OP_COMPRESSED,
  parseMessage,
  REPLY_QUERY_FAILURE,
  type OpMsgRequest,
  type OpQueryRequest,
} from "./wire.js";

export interface ServerOptions {
  engine: Engine;
  persistence: Persistence | null;
  log: LogFn;
}

export class EmulatorServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private nextConnectionId = 1;
  private totalCreated = 0;
  private info: ServerInfo | null = null;

  constructor(private readonly opts: ServerOptions) {
    this.server = createServer((socket) => this.accept(socket));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        const addr = this.server.address();
        const actual = typeof addr === "object" && addr ? addr.port : port;
        const durable = this.opts.persistence !== null;
        const startedAt = Date.now();
        this.info = {
          host,
          port: actual,
          startedAt,
          durable,
          connections: () => ({ current: this.sockets.size, totalCreated: this.totalCreated }),
        };
        resolve(actual);
      });
    });
  }

  /** Stops accepting, then closes every client connection. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    return closed;
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    this.sockets.add(socket);
    this.totalCreated++;
    const conn: ConnectionInfo = { id: this.nextConnectionId++, remote: `${socket.remoteAddress}:${socket.remotePort}`, client: null };
    const session = new Connection(socket, conn, this.opts, () => this.info!);
    socket.on("data", (chunk) => session.onData(chunk));
    socket.on("error", (e) => this.opts.log("debug", "client connection error", { connectionId: conn.id, error: e.message }));
    socket.on("close", () => this.sockets.delete(socket));
  }
}

/** One client connection: framing state and the ordered reply stream. */
class Connection {
  private readonly framer = new MessageFramer();
  /** Set while a reply waits for the journal; later replies queue behind it to keep order. */
  private replyChain: Promise<void> | null = null;

  constructor(
    private readonly socket: Socket,
    private readonly conn: ConnectionInfo,
    private readonly opts: ServerOptions,
    private readonly info: () => ServerInfo,
  ) {}

  onData(chunk: Buffer): void {
    this.socket.cork();
    try {
      for (const msg of this.framer.push(chunk)) {
        this.handle(msg);
        if (this.socket.destroyed) return;
      }
    } catch (e) {
      this.protocolFailure(e);
    } finally {
      if (!this.socket.destroyed) this.socket.uncork();
    }
  }

  private protocolFailure(e: unknown): void {
    this.opts.log("warn", "closing connection after a malformed message", {
      connectionId: this.conn.id,
      error: e instanceof Error ? e.message : String(e),
    });
    this.socket.destroy();
  }

  private handle(msg: Buffer): void {
    let req;
    try {
      req = parseMessage(msg);
    } catch (e) {
      if (e instanceof ProtocolError) return this.protocolFailure(e);
      throw e;
    }
    switch (req.kind) {
      case "msg":
        return this.handleMsg(req);
      case "query":
        return this.handleQuery(req);
      default:
        if (req.opCode === OP_COMPRESSED) {
          // No compressor is ever negotiated (hello omits `compression`), so a well-behaved client
          // never sends this; answer with an error rather than guess the inner message.
          const err = commandError("BadValue", "OP_COMPRESSED is not supported by the Kairos emulator; connect without compressors");
          return this.send(encodeMsgReply(req.requestId, err.toReply()));
        }
        // Legacy opcodes (OP_INSERT, OP_GET_MORE, ...) were removed in MongoDB 6.0 and have no
        // reply we could send that an old client would understand.
        return this.protocolFailure(new ProtocolError(`unsupported opcode ${req.opCode}`));
    }
  }

  private handleMsg(req: OpMsgRequest): void {
    const body = req.body;
    for (const [id, docs] of req.sequences) {
      if (id in body) {
        this.send(encodeMsgReply(req.requestId, commandError("BadValue", `duplicate field '${id}' in body and document sequence`).toReply()));
        return;
      }
      body[id] = docs;
    }
    const db = body.$db;
    if (typeof db !== "string") {
      const reply = { ok: 0, errmsg: "OP_MSG requests require a $db argument", code: 40571, codeName: "Location40571" };
      if (!req.moreToCome) this.send(encodeMsgReply(req.requestId, reply));
      return;
    }
    const result = runCommand({ engine: this.opts.engine, db, body, conn: this.conn, now: new Date(), server: this.info() });
    if (req.moreToCome) return;
    const persistence = this.opts.persistence;
    if (result.waitForJournal && persistence) {
      // The write is applied in memory; only its acknowledgement waits for the disk. If the
      // journal fails, say so the way MongoDB does for an unsatisfied write concern.
      const ready = persistence.durable().then(
        () => result.reply,
        (e: Error) => ({
          ...result.reply,
          writeConcernError: { code: 100, codeName: "UnsatisfiableWriteConcern", errmsg: `journal write failed: ${e.message}` },
        }),
      );
      this.sendAfter(ready.then((reply) => this.encode(req.requestId, reply, encodeMsgReply)));
    } else {
      this.send(this.encode(req.requestId, result.reply, encodeMsgReply));
    }
  }

  private handleQuery(req: OpQueryRequest): void {
    const ns = req.fullCollectionName;
    const name = Object.keys(req.query)[0] ?? "";
    let reply: Doc;
    if (!ns.endsWith(".$cmd")) {
      const err = { $err: "OP_QUERY find is no longer supported; use the find command over OP_MSG", code: 5739101, ok: 0 };
      this.send(encodeOpReply(req.requestId, err, REPLY_QUERY_FAILURE));
      return;
    }
    if (!OP_QUERY_COMMANDS.has(name)) {
      reply = {
        ok: 0,
        errmsg: `Unsupported OP_QUERY command: ${name}. The client driver may require an upgrade.`,
        code: ErrorCode.UnsupportedOpQueryCommand,
        codeName: "UnsupportedOpQueryCommand",
      };
    } else {
      const db = ns.slice(0, -".$cmd".length);
      const body = isPlainObject(req.query) ? req.query : {};
      reply = runCommand({ engine: this.opts.engine, db, body, conn: this.conn, now: new Date(), server: this.info() }).reply;
    }
    this.send(this.encode(req.requestId, reply, encodeOpReply));
  }

  /** Encodes a reply; a reply too large for BSON becomes an error reply instead. */
  private encode(requestId: number, reply: Doc, enc: (responseTo: number, doc: Doc) => Buffer): Buffer {
    try {
      return enc(requestId, reply);
    } catch (e) {
      return enc(requestId, {
        ok: 0,
        errmsg: `reply could not be encoded: ${(e as Error).message}`,
        code: 10334,
        codeName: "BSONObjectTooLarge",
      });
    }
  }

  private send(out: Buffer): void {
    if (this.replyChain) {
      this.sendAfter(Promise.resolve(out));
      return;
    }
    if (!this.socket.destroyed) this.socket.write(out);
  }

  /** Queues a reply that is not ready yet; replies leave in request order. */
  private sendAfter(ready: Promise<Buffer>): void {
    const prev = this.replyChain ?? Promise.resolve();
    const next = Promise.all([prev, ready]).then(([, out]) => {
      if (!this.socket.destroyed) this.socket.write(out);
      if (this.replyChain === next) this.replyChain = null;
    });
    this.replyChain = next;
  }
}

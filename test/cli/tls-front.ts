/**
 * An https front for the product in tests: TLS (with test/helpers/redis-tls.ts's throw-away CA)
 * ended on a port of its own and passed on to the product's plain port, as a TLS proxy would. What
 * it does with a client that speaks plain http to it is chosen: hang up (as Node's https server
 * does), or answer 400 "The plain HTTP request was sent to HTTPS port" (as nginx does).
 */
import { connect, createServer, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { Duplex, PassThrough } from "node:stream";
import { TLSSocket } from "node:tls";
import type { TlsFiles } from "../helpers/redis-tls.js";

export interface TlsFront {
  /** https://127.0.0.1:PORT */
  url: string;
  close(): Promise<void>;
}

const NGINX_400 = "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n</body>\r\n</html>\r\n";

export async function tlsFront(target: URL, tls: TlsFiles, plainHttp: "hang-up" | "nginx-400"): Promise<TlsFront> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  };
  const context = { key: readFileSync(tls.serverKey), cert: readFileSync(tls.serverCert) };
  const server = createServer((raw) => {
    track(raw);
    raw.once("data", (first) => {
      // A TLS handshake starts with record type 22; anything else is someone speaking plain http.
      // The first bytes are read already: TLS is run over a stream that gives them again (a TLSSocket
      // over the socket itself would read its handle, past them).
      if (first[0] === 0x16) {
        const inbound = new PassThrough();
        inbound.write(first);
        raw.pipe(inbound);
        const clear = new TLSSocket(Duplex.from({ readable: inbound, writable: raw }), { isServer: true, ...context });
        const upstream = connect(Number(target.port), target.hostname);
        track(clear as unknown as Socket);
        track(upstream);
        clear.pipe(upstream).pipe(clear);
      } else if (plainHttp === "hang-up") {
        raw.destroy();
      } else {
        raw.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(NGINX_400)}\r\nconnection: close\r\n\r\n${NGINX_400}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

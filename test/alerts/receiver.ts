/** A local webhook receiver for the alert tests: records every request; a path's first N answers can be made to fail. */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  json: Record<string, any>;
}

export interface Receiver {
  base: string;
  received: Received[];
  /** The next `n` requests to `path` answer `status`. */
  failNext(path: string, n: number, status: number): void;
  on(path: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const failing = new Map<string, { n: number; status: number }>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const path = req.url!.split("?")[0]!;
      const fail = failing.get(path);
      if (fail && fail.n > 0) {
        fail.n--;
        res.writeHead(fail.status);
        res.end("not now");
        return;
      }
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(body) as Record<string, any>;
      } catch {
        // recorded as is
      }
      received.push({ path, headers: req.headers, body, json });
      res.writeHead(200);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    failNext: (path, n, status) => failing.set(path, { n, status }),
    on: (path) => received.filter((r) => r.path === path),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

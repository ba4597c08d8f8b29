/** Health and metrics endpoints, shared by the API server and the ops server of the other roles. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express } from "express";
import type { Logger } from "../support/index.js";
import { listen, registry } from "../support/index.js";
import { errorHandler, hardenApp, notFound } from "./errors-http.js";

export type ReadyCheck = () => Promise<boolean>;

export function mountOps(app: Express, ready?: ReadyCheck): void {
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const ok = ready ? await ready().catch(() => false) : true;
    res.status(ok ? 200 : 503).json({ status: ok ? "ready" : "not ready" });
  });
  app.get("/metrics", async (_req, res) => {
    res.type("text/plain; version=0.0.4").send(await registry.render());
  });
}

/** `/healthz`, `/readyz` and `/metrics` alone, for the scheduler and executor roles. */
export async function startOpsServer(port: number, host: string, log: Logger, ready?: ReadyCheck): Promise<{ port: number; stop(): Promise<void> }> {
  const app = express();
  hardenApp(app);
  mountOps(app, ready);
  app.use(notFound());
  app.use(errorHandler(log));
  const server: Server = createServer(app);
  await listen(server, port, host);
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

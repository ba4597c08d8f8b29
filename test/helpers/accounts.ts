/** Helpers for the account, API key and idempotency tests: users, forged tokens, watched subscriptions, captured logs. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createClient } from "graphql-ws";
import jwt from "jsonwebtoken";
import { pino } from "pino";
import WebSocket from "ws";
import type { Logger } from "../../src/support/log.js";
import type { TestApp } from "./app.js";
import { gqlOk, login } from "./graphql.js";

export const PASSWORD = "correct-horse-battery";

export const code = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;
export const message = (r: { errors?: Array<{ message: string }> }) => r.errors?.[0]?.message;

export async function makeUser(app: TestApp, admin: string, username: string, role = "USER"): Promise<{ id: string; token: string }> {
  const { createUser } = await gqlOk<{ createUser: { id: string } }>(
    app.url,
    `mutation($u: String!, $p: String!, $r: Role) { createUser(username: $u, password: $p, role: $r) { id } }`,
    { u: username, p: PASSWORD, r: role },
    admin,
  );
  return { id: createUser.id, token: await login(app.url, username, PASSWORD) };
}

/** A job that runs only when triggered (its schedule is far away). */
export async function makeJob(app: TestApp, token: string, name: string, pool?: string): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", ...(pool ? { pool } : {}) } } },
    token,
  );
  return d.createJob.id;
}

/** Signs a token with the test app's secret: `claims` replace the usual ones (omit `exp` by passing `noExp`). */
export function forgeToken(app: TestApp, claims: { sub: string; tv?: number; expInSec?: number; noExp?: boolean }): string {
  const secret = readFileSync(join(app.config.dataDir, "jwt-secret"), "utf8").trim();
  return jwt.sign({ username: "forged", tv: claims.tv ?? 0 }, secret, {
    algorithm: "HS256",
    subject: claims.sub,
    issuer: "kairos",
    audience: "kairos-api",
    ...(claims.noExp ? {} : { expiresIn: claims.expInSec ?? 600 }),
  });
}

export interface WatchedSubscription {
  events: Array<{ runUpdated: { id: string; status: string } }>;
  errors: unknown[];
  /** Resolves with the close code and reason when the server closes the connection. */
  closed: Promise<{ code: number; reason: string }>;
  /** Triggers the job until an event arrives: the subscription is delivering. */
  delivering(trigger: () => Promise<unknown>): Promise<void>;
  dispose(): Promise<void>;
}

/** A runUpdated subscription for one job over a real WebSocket, with `credential` in connectionParams. */
export function watchJob(app: TestApp, credential: string, jobId: string): WatchedSubscription {
  const events: WatchedSubscription["events"] = [];
  const errors: unknown[] = [];
  let onClosed!: (c: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((r) => (onClosed = r));
  const client = createClient({
    url: app.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${credential}` },
    retryAttempts: 0,
    lazy: true,
    on: { closed: (e) => onClosed({ code: (e as { code: number }).code, reason: String((e as { reason: unknown }).reason) }) },
  });
  client.subscribe<WatchedSubscription["events"][number]>(
    { query: `subscription($id: ID) { runUpdated(jobId: $id) { id status } }`, variables: { id: jobId } },
    { next: (v) => (v.data ? events.push(v.data) : errors.push(v.errors)), error: (e) => errors.push(e), complete: () => undefined },
  );
  return {
    events,
    errors,
    closed,
    async delivering(trigger) {
      for (let i = 0; i < 20 && events.length === 0; i++) {
        await trigger();
        const until = Date.now() + 500;
        while (events.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      }
      if (events.length === 0) throw new Error(`the subscription delivered nothing: ${JSON.stringify(errors)}`);
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}

/** A logger at `warn` whose lines the test can read. */
export function capturedLogger(): { log: Logger; lines: () => Array<Record<string, unknown>>; raw: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const log = pino({ level: "warn", formatters: { level: (label) => ({ level: label }) } }, stream);
  const raw = () => chunks.join("");
  return { log, raw, lines: () => raw().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

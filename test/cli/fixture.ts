/**
 * The built `kairos` command line against the product (test/cli/kairos.test.ts): the build of the
 * command line, a subprocess runner, and one product in-process per file with a private home for
 * the CLI's stored logins.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { TSC_STEPS } from "../../scripts/build-steps.mjs";
import { markBuilt, markFailed, staleReason } from "../../scripts/stale.mjs";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { login } from "../helpers/graphql.js";

export const ROOT = join(import.meta.dirname, "..", "..");
export const BIN = join(ROOT, "bin", "kairos.js");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The command line as built: its own compile step (scripts/build-steps.mjs, "the command line") is
 * run here when any of its inputs changed since its last build (the decision `npm run build` makes,
 * scripts/stale.mjs), so that a test never runs a stale dist/cli; the rest of the build
 * (dist/main.js) must be there and newer than src/main.ts, or the test fails saying so.
 *
 * Files that use this may run side by side: a lock (a directory, made atomically) lets one of them
 * compile while the others wait and then find the build current, so no file runs the command line
 * while another rewrites it.
 */
export async function buildCli(): Promise<void> {
  const main = join(ROOT, "dist", "main.js");
  if (!existsSync(main)) throw new Error("dist/main.js is missing: run `npm run build` first");
  if (statSync(join(ROOT, "src", "main.ts")).mtimeMs > statSync(main).mtimeMs) throw new Error("dist/main.js is older than src/main.ts: run `npm run build`");
  const step = TSC_STEPS.find((s) => s.project === "src/cli/tsconfig.build.json");
  if (!step) throw new Error("scripts/build-steps.mjs has no step for src/cli/tsconfig.build.json");
  const lock = join(ROOT, "dist", ".cli-build.lock");
  for (const end = Date.now() + 600_000; ; ) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      // A lock left by a killed run: no build of the command line takes ten minutes.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > end) throw new Error(`waited 10 minutes for ${lock}: remove it if no test runs`);
      await sleep(200);
    }
  }
  try {
    if (!staleReason(step)) return;
    const startedAt = Date.now();
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, step.project)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code) => resolve({ code, out }));
    });
    if (r.code !== 0) {
      markFailed(step.output);
      throw new Error(`building the command line failed:\n${r.out}`);
    }
    markBuilt(step.output, startedAt);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface Result {
  code: number | null;
  out: string;
  err: string;
}

export interface Running {
  out: () => string;
  err: () => string;
  done: Promise<Result>;
  kill: () => void;
}

export function start(args: string[], opts: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", NO_COLOR: "1", ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  child.stdin.end(opts.input ?? "");
  const done = new Promise<Result>((resolve) => child.on("close", (code) => resolve({ code, out, err })));
  return { out: () => out, err: () => err, done, kill: () => child.kill("SIGKILL") };
}

export const until = async (fn: () => boolean | Promise<boolean>, ms: number, what: string, everyMs = 50) => {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
};

/** A TCP proxy to the API whose open connections the test can cut (a dropped network, as the CLI sees it). */
export async function cuttableProxy(target: URL): Promise<{ url: string; cut: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    cut: () => {
      const n = sockets.size;
      for (const s of sockets) s.destroy();
      return n;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface CliFixture {
  /** The product in-process (startTestApp's). */
  readonly app: TestApp;
  /** The administrator's token, for setting up through the API. */
  readonly admin: string;
  /** A private home: `config/` is the CLI's XDG_CONFIG_HOME, `jobs/` an empty folder for files. */
  readonly home: string;
  readonly files: string;
  /** The environment every `kairos` of the file runs with (XDG_CONFIG_HOME in `home`). */
  readonly env: Record<string, string>;
  kairos(args: string[], extra?: { input?: string; env?: Record<string, string> }): Promise<Result>;
}

/** One product and one CLI home for the file, ready before its tests: the command line built while the product starts. */
export function useCliFixture(): CliFixture {
  const f = { app: undefined as unknown as TestApp, admin: "", home: "", files: "", env: {} as Record<string, string> };
  const kairos: CliFixture["kairos"] = (args, extra = {}) => start(args, { env: { ...f.env, ...extra.env }, input: extra.input }).done;
  // Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
  beforeAll(async () => {
    const [app] = await Promise.all([startTestApp(), buildCli()]);
    f.app = app;
    f.admin = await login(app.url, ADMIN.username, ADMIN.password);
    f.home = await mkdtemp(join(tmpdir(), "kairos-cli-home-"));
    f.files = join(f.home, "jobs");
    await mkdir(f.files);
    f.env = { XDG_CONFIG_HOME: join(f.home, "config") };
  }, 300_000);
  afterAll(async () => {
    await f.app?.dispose();
    if (f.home) await rm(f.home, { recursive: true, force: true });
  }, 60_000);
  return Object.assign(f, { kairos });
}

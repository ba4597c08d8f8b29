/// <reference lib="dom" />
/**
 * The web console in Debian's Chromium (issue #28), three figures:
 *
 *  (a) live status: the time from a run's status change in the product to the new status on the
 *      page, on the run's page (/runs/:id) and on the runs list (/runs). The product's instant is
 *      the run's `updatedAt` as the change stamps it (read from the run event the product itself
 *      publishes, subscribed to in-process); the page's instant is when a MutationObserver sees the
 *      new `data-status` in the DOM, and the next animation frame (the frame it is painted in). Both
 *      are this machine's wall clock (Date.now() / performance.timeOrigin + now()). Changes are made
 *      one at a time with cancelRun / retryRun on runs that stay QUEUED (their pool has no node),
 *      each waited for on the page before the next.
 *  (b) the runs view with `--runs` (100,000) runs of one user in the store: cold loads of /runs
 *      (fresh browser context, empty cache, logged in) until 20 rows with their links are in the
 *      DOM; then scrolling the list for `--scroll-seconds` with the mouse wheel and with scrollTop
 *      steps, with Long Tasks and every animation frame's interval recorded.
 *  (c) the first load's JavaScript and CSS (dist/console's manifest): raw and gzip -9, and the
 *      largest chunks loaded later (a view's, on first visit).
 *
 * BullMQ has no console to set beside these (bull-board is its UI, and it is not installed here):
 * no BullMQ figure is printed.
 *
 *   node --import tsx bench/console.ts                     # 100,000 runs, 200 changes per page
 *   node --import tsx bench/console.ts --runs 20000 --changes 100 --loads 3
 *   npm run bench -- --shapes console
 *
 * Runs `dev` in this process (API, scheduler, executor, the embedded MongoDB emulator), no Redis;
 * Chromium at KAIROS_CHROMIUM or /usr/bin/chromium, headless (test/console/browser.ts).
 */
import "reflect-metadata";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startKairos, type KairosApp } from "../src/app/start.js";
import { loadConfig } from "../src/config/index.js";
import type { RunDoc } from "../src/domain/index.js";
import { newId } from "../src/store/index.js";
import { finishedRunDoc } from "./lib/finished-run.js";
import { silentLogger } from "../src/support/index.js";
import { launchChromium } from "../test/console/browser.js";
import { fmtMs, fmtNum, summarize, table, type Summary } from "./lib/stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist/console");
/** The build the bench serves and sizes: a private copy of DIST (privateConsoleBuild). */
let served = DIST;
const PASSWORD = "console-bench-password";
/** A pool no node serves: the bench's live runs stay QUEUED until it cancels them. */
const NOWHERE = "console-bench-nowhere";
const DAY = 24 * 3600 * 1000;

export interface ConsoleBenchOptions {
  /** Runs of the user in the store for (b) (and present during (a)). */
  runs: number;
  /** Status changes measured on each page (run page, runs list). */
  changes: number;
  /** Cold loads of /runs. */
  loads: number;
  scrollSeconds: number;
  /** Every run on one job, and the list opened as /runs?job=<it> (a job's runs, not a search across jobs). */
  oneJob?: boolean;
}

export interface LatencyResult {
  page: string;
  /** updatedAt of the change → the new status in the DOM. */
  dom: Summary;
  /** updatedAt → the animation frame after (painted). */
  frame: Summary;
  /** Just before the mutation's HTTP request → the frame: includes the mutation's own round trip. */
  fromRequest: Summary;
}

export interface ScrollResult {
  how: string;
  seconds: number;
  frames: number;
  frame: Summary;
  /** Frame intervals over 25 ms (more than one 60 Hz frame late). */
  dropped: number;
  longTasks: number;
  longTaskMs: number;
  longestTaskMs: number;
  rowsLoaded: number;
  scrolledPx: number;
}

export interface AssetSize {
  file: string;
  raw: number;
  gzip: number;
  /** What the server sends a browser: the build's brotli copy (src/api/console-assets.ts), else the file. */
  served: number;
}

export interface ConsoleBenchResult {
  host: string;
  chromium: string;
  date: string;
  runs: number;
  /** Which runs list was measured. */
  scope: string;
  seedSeconds: number;
  latency: LatencyResult[];
  /** Navigation start → 20 row links in the DOM, per cold load; and → the frame after. */
  openMs: number[];
  openFrameMs: number[];
  openLongTasks: number[];
  /** Per cold load, where the time went: index.html, the entry script, and the API's answers before the rows. */
  openParts: OpenParts[];
  /** In the open app: a click on the Runs link (from /jobs) → 20 rows in the DOM, each time. */
  warmMs: number[];
  scroll: ScrollResult[];
  firstLoad: { files: AssetSize[]; js: { raw: number; gzip: number; served: number }; css: { raw: number; gzip: number; served: number } };
  lazy: AssetSize[];
}

// ---------------------------------------------------------------------------------------------
// The product and its data

async function gql<T = Record<string, any>>(url: string, token: string | null, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors?.length) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return body.data!;
}

/**
 * The console's build, made again if missing or older than its sources (as the test suite does),
 * then copied to `into`, which the product serves (KAIROS_CONSOLE_DIR): a rebuild of dist/console
 * while the bench runs (a test run in the same checkout) cannot change the files under measurement.
 * A copy taken while a rebuild was emptying dist/console is taken again.
 */
async function privateConsoleBuild(into: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    execFileSync(process.execPath, [join(ROOT, "scripts/build-console.mjs")], { cwd: ROOT, stdio: "inherit" });
    await rm(into, { recursive: true, force: true });
    try {
      cpSync(DIST, into, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(into, ".vite/manifest.json"), "utf8")) as Record<string, ManifestChunk>;
      const files = Object.values(manifest).flatMap((c) => [c.file, ...(c.css ?? [])]);
      if (existsSync(join(into, "index.html")) && files.every((f) => existsSync(join(into, f)))) return;
    } catch {
      // dist/console was being rebuilt
    }
    if (attempt === 5) throw new Error("could not copy a whole build of dist/console (is something rebuilding it over and over?)");
    await pause(3_000);
  }
}

/** A finished run as an executor leaves one: 1 in 10 FAILED, spread over the last 100 days, oldest first. */
function seededRun(ownerId: string, jobs: Array<{ id: string; name: string }>, i: number, n: number, now: number): RunDoc {
  const id = newId();
  const job = jobs[i % jobs.length]!;
  const scheduledFor = new Date(now - 3_600_000 - Math.floor(((n - i) / n) * 100 * DAY));
  const failed = i % 10 === 3;
  const node = `node-${"abcd"[i % 4]}`;
  const startedAt = new Date(scheduledFor.getTime() + 40 + (i % 50));
  const finishedAt = new Date(startedAt.getTime() + 800 + (i % 997) * 7);
  return finishedRunDoc({
    _id: id,
    ownerId,
    jobId: job.id,
    jobName: job.name,
    fireKey: `${job.id}@${scheduledFor.getTime()}:${i}`,
    trigger: i % 20 === 0 ? "MANUAL" : "SCHEDULE",
    scheduledFor,
    startedAt,
    finishedAt,
    failed,
    nodeId: node,
    command: "./report --since yesterday",
    extra: {
      outputTail: failed ? "report: upstream returned 503\n" : "wrote report.csv\n",
      usage: { peakMemoryMb: 40 + (i % 60), cpuSeconds: 0.4 + (i % 10) / 10 },
    },
  });
}

interface Bench {
  app: KairosApp;
  url: string;
  base: string;
  token: string;
  session: string;
  liveJob: string;
  /** The runs list's address: /runs, or /runs?job=<id> with oneJob. */
  runsPath: string;
  /** Why the runs are one job's, if they are. */
  scope: string;
  /** Run id + status → the change's updatedAt (ms), as the product published it. */
  changedAt: Map<string, number>;
  unsubscribe: () => void;
}

async function startProduct(opts: ConsoleBenchOptions, dataDir: string): Promise<Bench & { seedSeconds: number }> {
  const config = loadConfig("dev", {
    KAIROS_PORT: "0",
    KAIROS_DATA_DIR: dataDir,
    KAIROS_ADMIN_USER: "admin",
    KAIROS_ADMIN_PASSWORD: PASSWORD,
    KAIROS_EXECUTOR_SLOTS: "2",
    // The bench's own requests are many and fast; the console's share the user's budget otherwise.
    KAIROS_RATE_REQUESTS: "off",
    KAIROS_RATE_SUBMISSIONS: "off",
    KAIROS_MAX_WAITING_RUNS: "100000",
  });
  const app = await startKairos(config, { log: silentLogger() });
  const url = app.api!.url;
  const base = url.replace(/\/graphql$/, "/");
  const admin = (await gql(url, null, `mutation($p: String!) { login(username: "admin", password: $p) { token } }`, { p: PASSWORD })).login.token as string;
  const { createUser } = await gql(url, admin, `mutation($p: String!) { createUser(username: "operator", password: $p) { id } }`, { p: PASSWORD });
  const login = (await gql(url, null, `mutation($p: String!) { login(username: "operator", password: $p) { token expiresAt user { id username role } } }`, { p: PASSWORD })).login;
  const token = login.token as string;
  const session = JSON.stringify({ credential: token, via: "password", user: login.user, expiresAt: login.expiresAt });
  const mkJob = async (name: string) =>
    (
      await gql(url, token, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, {
        i: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "./report --since yesterday", pool: NOWHERE } },
      })
    ).createJob.id as string;
  const jobs: Array<{ id: string; name: string }> = [];
  for (let j = 0; j < 20; j++) {
    const name = `report-${["daily", "hourly", "billing", "etl", "backup"][j % 5]}-${String(j).padStart(2, "0")}`;
    jobs.push({ id: await mkJob(name), name });
  }
  const liveJob = await mkJob("console-bench-live");
  // Before the API's run search across jobs (Query.runs without jobId), the runs view lists one job's runs.
  const query = (await gql(url, admin, `{ __type(name: "Query") { fields { name args { name type { kind } } } } }`)).__type as { fields: Array<{ name: string; args: Array<{ name: string; type: { kind: string } }> }> };
  const jobIdRequired = query.fields.find((f) => f.name === "runs")?.args.find((a) => a.name === "jobId")?.type.kind === "NON_NULL";
  const oneJob = !!opts.oneJob || jobIdRequired;
  if (oneJob) jobs.splice(0, jobs.length, { id: liveJob, name: "console-bench-live" });
  const runsPath = oneJob ? `runs?job=${liveJob}` : "runs";

  const t0 = performance.now();
  const now = Date.now();
  for (let i = 0; i < opts.runs; i += 5_000) {
    const batch = Array.from({ length: Math.min(5_000, opts.runs - i) }, (_, k) => seededRun(createUser.id as string, jobs, i + k, opts.runs, now));
    await app.services.mongo.c.runs.insertMany(batch, { ordered: false });
  }
  const seedSeconds = (performance.now() - t0) / 1000;

  const changedAt = new Map<string, number>();
  const unsubscribe = await app.services.events.subscribe((run) => {
    changedAt.set(`${run._id}:${run.status}:${run.attempt}`, new Date(run.updatedAt).getTime());
  });
    const scope = !oneJob ? "over 20 jobs, /runs (the search across jobs)" : jobIdRequired ? "all of one job, /runs?job=<id> (this build's API has no run search across jobs yet: Query.runs needs jobId)" : "all of one job, /runs?job=<id> (--one-job)";
  return { app, url, base, token, session, liveJob, runsPath, scope, changedAt, unsubscribe, seedSeconds };
}

// ---------------------------------------------------------------------------------------------
// (a) status change → page

/**
 * Watches `data-status` in the page: for each key (a row's run id on the list, "page" for the run
 * page's first badge, its heading's) the first time it shows a new status, with the DOM instant and
 * the next animation frame's.
 */
function installStatusObserver(page: Page, mode: "list" | "page"): Promise<void> {
  return page.evaluate((mode) => {
    const w = window as unknown as { __seen: Array<{ key: string; status: string; dom: number; frame: number | null }> };
    w.__seen = [];
    const last = new Map<string, string>();
    const at = () => performance.timeOrigin + performance.now();
    const scan = () => {
      const t = at();
      const els: Element[] = mode === "page" ? [document.querySelector("main [data-status]")].filter((e): e is Element => !!e) : Array.from(document.querySelectorAll("main [data-run-id] [data-status]"));
      for (const el of els) {
        const key = mode === "page" ? "page" : (el.closest("[data-run-id]")?.getAttribute("data-run-id") ?? "");
        const status = el.getAttribute("data-status") ?? "";
        if (last.get(key) === status) continue;
        last.set(key, status);
        const entry = { key, status, dom: t, frame: null as number | null };
        w.__seen.push(entry);
        requestAnimationFrame(() => (entry.frame = at()));
      }
    };
    scan();
    new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"] });
  }, mode);
}

async function waitSeen(page: Page, key: string, status: string, from: number): Promise<{ dom: number; frame: number }> {
  const h = await page.waitForFunction(
    ({ key, status, from }) => {
      const seen = (window as unknown as { __seen: Array<{ key: string; status: string; dom: number; frame: number | null }> }).__seen;
      for (let i = seen.length - 1; i >= from; i--) {
        const s = seen[i]!;
        if (s.key === key && s.status === status && s.frame !== null) return { dom: s.dom, frame: s.frame };
      }
      return null;
    },
    { key, status, from },
    { timeout: 15_000, polling: 5 },
  );
  return (await h.jsonValue()) as { dom: number; frame: number };
}

const seenCount = (page: Page) => page.evaluate(() => (window as unknown as { __seen: unknown[] }).__seen.length);

async function runAttempt(b: Bench, id: string): Promise<number> {
  return (await gql(b.url, b.token, `query($id: ID!) { run(id: $id) { attempt } }`, { id })).run.attempt as number;
}

/** One change: cancel (QUEUED → CANCELLED) or retry (CANCELLED → QUEUED), timed to the page. */
async function change(b: Bench, page: Page, id: string, key: string, to: "CANCELLED" | "QUEUED", attempt: number): Promise<{ dom: number; frame: number; request: number; stamped: number }> {
  const from = await seenCount(page);
  const request = Date.now();
  const r = await gql(b.url, b.token, to === "CANCELLED" ? `mutation($id: ID!) { cancelRun(id: $id) { status attempt } }` : `mutation($id: ID!) { retryRun(id: $id) { status attempt } }`, { id });
  const run = (to === "CANCELLED" ? r.cancelRun : r.retryRun) as { status: string; attempt: number };
  if (run.status !== to) throw new Error(`run ${id} is ${run.status}, not ${to}`);
  const seen = await waitSeen(page, key, to, from);
  const stamped = b.changedAt.get(`${id}:${to}:${run.attempt}`) ?? b.changedAt.get(`${id}:${to}:${attempt}`);
  if (stamped === undefined) throw new Error(`no run event for ${id} ${to} (attempt ${run.attempt})`);
  return { ...seen, request, stamped };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function trigger(b: Bench): Promise<string> {
  return (await gql(b.url, b.token, `mutation($id: ID!) { triggerJob(id: $id) { id status } }`, { id: b.liveJob })).triggerJob.id as string;
}

/**
 * A fresh context for the console. tsx compiles this file keeping function names (esbuild's
 * keepNames wraps them in `__name(…)`), and the functions handed to the page carry that call: the
 * page gets an identity `__name` first.
 */
async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript({ content: "globalThis.__name = (f) => f;" });
  return context;
}

async function loggedInPage(browser: Browser, b: Bench): Promise<Page> {
  const context = await newContext(browser);
  await context.addInitScript((s) => sessionStorage.setItem("kairos.session", s), b.session);
  const page = await context.newPage();
  page.on("pageerror", (e) => process.stderr.write(`  page error: ${e.message}\n`));
  return page;
}

function latencyOf(pageName: string, samples: Array<{ dom: number; frame: number; request: number; stamped: number }>): LatencyResult {
  return {
    page: pageName,
    dom: summarize(samples.map((s) => s.dom - s.stamped)),
    frame: summarize(samples.map((s) => s.frame - s.stamped)),
    fromRequest: summarize(samples.map((s) => s.frame - s.request)),
  };
}

async function benchRunPage(browser: Browser, b: Bench, changes: number): Promise<LatencyResult> {
  const id = await trigger(b);
  const page = await loggedInPage(browser, b);
  await page.goto(`${b.base}runs/${id}`);
  await page.locator('main [data-status="QUEUED"]').first().waitFor();
  await pause(500); // the live subscription is open
  await installStatusObserver(page, "page");
  const samples = [];
  let attempt = await runAttempt(b, id);
  for (let i = 0; i < changes; i++) {
    const to = i % 2 === 0 ? "CANCELLED" : "QUEUED";
    samples.push(await change(b, page, id, "page", to, attempt));
    if (to === "QUEUED") attempt++;
    await pause(20 + Math.random() * 60);
  }
  await page.context().close();
  return latencyOf("run page /runs/:id", samples);
}

async function benchRunsList(browser: Browser, b: Bench, changes: number): Promise<LatencyResult> {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await trigger(b));
  const page = await loggedInPage(browser, b);
  await page.goto(`${b.base}${b.runsPath}`);
  for (const id of ids) await page.locator(`[data-run-id="${id}"] [data-status="QUEUED"]`).waitFor();
  await pause(500);
  await installStatusObserver(page, "list");
  const attempts = new Map<string, number>();
  for (const id of ids) attempts.set(id, await runAttempt(b, id));
  const samples = [];
  for (let i = 0; i < changes; i++) {
    const id = ids[Math.floor(i / 2) % ids.length]!;
    const to = i % 2 === 0 ? "CANCELLED" : "QUEUED";
    samples.push(await change(b, page, id, id, to, attempts.get(id)!));
    if (to === "QUEUED") attempts.set(id, attempts.get(id)! + 1);
    await pause(20 + Math.random() * 60);
  }
  await page.context().close();
  return latencyOf("runs list /runs", samples);
}

// ---------------------------------------------------------------------------------------------
// (b) opening and scrolling the runs view

const ROWS = 20;

export interface OpenParts {
  /** Navigation start → index.html's last byte. */
  documentMs: number;
  /** → the entry script's last byte. */
  entryScriptMs: number;
  /** → the runs view's chunk's last byte (loaded once the frame decided to show /runs). */
  viewChunkMs: number;
  /** Long tasks before the rows were in: their total (ms on the page's main thread). */
  longTaskMs: number;
  /** /graphql requests the page made before the rows were in, each [start, end] ms after navigation start. */
  api: Array<[number, number]>;
}

async function openRuns(browser: Browser, b: Bench): Promise<{ page: Page; rowsMs: number; frameMs: number; longTasks: number; parts: OpenParts }> {
  const context = await newContext(browser);
  await context.addInitScript(
    ({ s, rows }) => {
      sessionStorage.setItem("kairos.session", s);
      const w = window as unknown as { __open: { rows: number | null; frame: number | null; longTasks: number; longTaskMs: number } };
      w.__open = { rows: null, frame: null, longTasks: 0, longTaskMs: 0 };
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) {
          if (w.__open.rows !== null && e.startTime > w.__open.rows) continue;
          w.__open.longTasks++;
          w.__open.longTaskMs += e.duration;
        }
      }).observe({ type: "longtask", buffered: true });
      const check = () => {
        if (w.__open.rows !== null) return;
        if (document.querySelectorAll('main tr[data-run-id] a[href^="/runs/"]').length < rows) return;
        w.__open.rows = performance.now();
        requestAnimationFrame(() => (w.__open.frame = performance.now()));
        mo.disconnect();
      };
      const mo = new MutationObserver(check);
      mo.observe(document, { subtree: true, childList: true });
    },
    { s: b.session, rows: ROWS },
  );
  const page = await context.newPage();
  await page.goto(`${b.base}${b.runsPath}`);
  const h = await page.waitForFunction(() => {
    const o = (window as unknown as { __open: { rows: number | null; frame: number | null; longTasks: number } }).__open;
    return o.frame !== null ? o : null;
  }, undefined, { timeout: 30_000, polling: 10 }).catch(async (e: unknown) => {
    throw new Error(`/runs did not show ${ROWS} rows: ${(e as Error).message}; ${await page.evaluate(() => `${document.querySelectorAll('main tr[data-run-id] a[href^="/runs/"]').length} row links, ${JSON.stringify((window as unknown as { __open: unknown }).__open)}`)}; the page said: ${(await page.locator("body").innerText()).slice(0, 300)}`);
  });
  const o = (await h.jsonValue()) as { rows: number; frame: number; longTasks: number; longTaskMs: number };
  const parts = await page.evaluate(({ rows, longTaskMs }) => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
    const entry = res.find((r) => /\/assets\/index-[^/]+\.js$/.test(r.name));
    const view = res.find((r) => /\/assets\/runs-view-[^/]+\.js$/.test(r.name));
    return {
      documentMs: nav.responseEnd,
      entryScriptMs: entry?.responseEnd ?? Number.NaN,
      viewChunkMs: view?.responseEnd ?? Number.NaN,
      longTaskMs,
      api: res.filter((r) => r.name.endsWith("/graphql") && r.startTime < rows).map((r) => [r.startTime, r.responseEnd] as [number, number]),
    };
  }, { rows: o.rows, longTaskMs: o.longTaskMs });
  return { page, rowsMs: o.rows, frameMs: o.frame, longTasks: o.longTasks, parts };
}

/** From the jobs view, a click on "Runs" until 20 rows are in the DOM (the app and its chunks loaded). */
async function warmOpen(page: Page, runsPath: string): Promise<number> {
  await page.getByRole("link", { name: "Jobs", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
  await page.waitForLoadState("networkidle");
  await page.evaluate((rows) => {
    const w = window as unknown as { __warm: { t0: number; rows: number | null } };
    w.__warm = { t0: 0, rows: null };
    const link = document.querySelector<HTMLAnchorElement>('nav a[href="/runs"]')!;
    const mo = new MutationObserver(() => {
      if (document.querySelectorAll('main tr[data-run-id] a[href^="/runs/"]').length < rows) return;
      w.__warm.rows = performance.now();
      mo.disconnect();
    });
    mo.observe(document.body, { subtree: true, childList: true });
    link.addEventListener("click", () => (w.__warm.t0 = performance.now()), { capture: true, once: true });
  }, ROWS);
  if (runsPath === "runs") await page.getByRole("link", { name: "Runs", exact: true }).click();
  else await page.evaluate((p) => { history.pushState(null, "", `/${p}`); dispatchEvent(new PopStateEvent("popstate")); (window as unknown as { __warm: { t0: number } }).__warm.t0 = performance.now(); }, runsPath);
  const h = await page.waitForFunction(() => {
    const w = (window as unknown as { __warm: { t0: number; rows: number | null } }).__warm;
    return w.rows !== null ? w.rows - w.t0 : null;
  }, undefined, { timeout: 30_000, polling: 10 });
  return (await h.jsonValue()) as number;
}

/** Frames and long tasks while `drive` scrolls the runs list for `seconds`. */
async function measureScroll(page: Page, how: string, seconds: number, drive: () => Promise<void>): Promise<ScrollResult> {
  await page.evaluate(() => {
    const el = document.querySelector<HTMLElement>(".runs-scroll")!;
    el.scrollTop = 0;
    const w = window as unknown as { __scroll: { frames: number[]; tasks: number[]; on: boolean; start: number } };
    const s = (w.__scroll = { frames: [] as number[], tasks: [] as number[], on: true, start: performance.now() });
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) if (s.on) s.tasks.push(e.duration);
    }).observe({ type: "longtask" });
    let prev = performance.now();
    const tick = (t: number) => {
      if (!s.on) return;
      s.frames.push(t - prev);
      prev = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame((t) => {
      prev = t;
      requestAnimationFrame(tick);
    });
  });
  await drive();
  const r = await page.evaluate(() => {
    const w = window as unknown as { __scroll: { frames: number[]; tasks: number[]; on: boolean; start: number } };
    w.__scroll.on = false;
    const el = document.querySelector<HTMLElement>(".runs-scroll")!;
    const loaded = /([\d,.\s ]+) runs? loaded/.exec(document.querySelector(".runs-foot")?.textContent ?? "")?.[1] ?? "0";
    return { frames: w.__scroll.frames, tasks: w.__scroll.tasks, seconds: (performance.now() - w.__scroll.start) / 1000, scrolled: el.scrollTop, loaded: Number(loaded.replace(/\D/g, "")) };
  });
  return {
    how,
    seconds: r.seconds,
    frames: r.frames.length,
    frame: summarize(r.frames),
    dropped: r.frames.filter((f) => f > 25).length,
    longTasks: r.tasks.length,
    longTaskMs: r.tasks.reduce((a, b) => a + b, 0),
    longestTaskMs: Math.max(0, ...r.tasks),
    rowsLoaded: r.loaded,
    scrolledPx: r.scrolled,
  };
}

async function benchScroll(page: Page, seconds: number): Promise<ScrollResult[]> {
  const box = (await page.locator(".runs-scroll").boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const wheel = await measureScroll(page, "mouse wheel, 240 px a step", seconds, async () => {
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      await page.mouse.wheel(0, 240);
      await pause(16);
    }
  });
  const steps = await measureScroll(page, "scrollTop += 1,200 px a frame", seconds, async () => {
    await page.evaluate((ms) => {
      const el = document.querySelector<HTMLElement>(".runs-scroll")!;
      return new Promise<void>((done) => {
        const end = performance.now() + ms;
        const step = () => {
          if (performance.now() > end) return done();
          el.scrollTop += 1_200;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      });
    }, seconds * 1000);
  });
  return [wheel, steps];
}

// ---------------------------------------------------------------------------------------------
// (c) what the first load downloads

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

function size(file: string): AssetSize {
  const buf = readFileSync(join(served, file));
  const br = join(served, `${file}.br`);
  return { file, raw: buf.length, gzip: gzipSync(buf, { level: 9 }).length, served: existsSync(br) ? statSync(br).size : buf.length };
}

/** The entry script, its static imports (the manifest's graph, and index.html's modulepreloads) and CSS. */
export function consoleSizes(): ConsoleBenchResult["firstLoad"] & { lazy: AssetSize[] } {
  const html = readFileSync(join(served, "index.html"), "utf8");
  const fromHtml = [...html.matchAll(/<(?:script|link)\b[^>]*(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  const first = new Set(fromHtml);
  const manifestPath = join(served, ".vite/manifest.json");
  const all = new Set<string>();
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, ManifestChunk>;
    for (const c of Object.values(manifest)) {
      all.add(c.file);
      for (const css of c.css ?? []) all.add(css);
    }
    const visit = (key: string) => {
      const c = manifest[key];
      if (!c || first.has(c.file) && key !== "index.html") return;
      first.add(c.file);
      for (const css of c.css ?? []) first.add(css);
      for (const i of c.imports ?? []) visit(i);
    };
    for (const [key, c] of Object.entries(manifest)) if (c.isEntry) visit(key);
  }
  const files = [...first].filter((f) => /\.(js|css)$/.test(f)).map(size);
  const sum = (ext: string) => files.filter((f) => f.file.endsWith(ext)).reduce((a, f) => ({ raw: a.raw + f.raw, gzip: a.gzip + f.gzip, served: a.served + f.served }), { raw: 0, gzip: 0, served: 0 });
  const lazy = [...all].filter((f) => !first.has(f) && /\.(js|css)$/.test(f)).map(size).sort((a, b) => b.gzip - a.gzip);
  return { files, js: sum(".js"), css: sum(".css"), lazy };
}

// ---------------------------------------------------------------------------------------------

function hostLine(): string {
  return `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? "?"}), load ${loadavg().map((l) => l.toFixed(2)).join(" ")}, node ${process.version}`;
}

export async function benchConsole(opts: ConsoleBenchOptions, progress: (s: string) => void = (s) => process.stderr.write(`… ${s}\n`)): Promise<ConsoleBenchResult> {
  const dataDir = await mkdtemp(join(tmpdir(), "kairos-bench-console-"));
  served = join(dataDir, "console-build");
  await privateConsoleBuild(served);
  process.env.KAIROS_CONSOLE_DIR = served;
  const sizes = consoleSizes();
  const hostAtStart = hostLine();
  let b: (Bench & { seedSeconds: number }) | undefined;
  let browser: Browser | undefined;
  try {
    progress(`starting the product and seeding ${fmtNum(opts.runs)} runs`);
    [b, browser] = await Promise.all([startProduct(opts, dataDir), launchChromium()]);
    const date = new Date().toISOString();
    progress(`seeded in ${b.seedSeconds.toFixed(1)} s; opening /runs ${opts.loads} times (cold)`);
    const openMs: number[] = [];
    const openFrameMs: number[] = [];
    const openLongTasks: number[] = [];
    const openParts: OpenParts[] = [];
    let last: Page | undefined;
    for (let i = 0; i < opts.loads; i++) {
      await last?.context().close();
      const o = await openRuns(browser, b);
      openMs.push(o.rowsMs);
      openFrameMs.push(o.frameMs);
      openLongTasks.push(o.longTasks);
      openParts.push(o.parts);
      last = o.page;
    }
    progress("opening /runs from the jobs view (warm)");
    const warmMs: number[] = [];
    for (let i = 0; i < opts.loads; i++) warmMs.push(await warmOpen(last!, b.runsPath));
    await last!.goto(`${b.base}${b.runsPath}`);
    await last!.locator('main tr[data-run-id] a[href^="/runs/"]').nth(ROWS - 1).waitFor();
    progress("scrolling the runs list");
    await pause(500);
    const scroll = await benchScroll(last!, opts.scrollSeconds);
    await last!.context().close();
    progress(`${opts.changes} status changes on a run's page`);
    const onPage = await benchRunPage(browser, b, opts.changes);
    progress(`${opts.changes} status changes on the runs list`);
    const onList = await benchRunsList(browser, b, opts.changes);
    return {
      host: `${hostAtStart}; load at the end ${loadavg().map((l) => l.toFixed(2)).join(" ")}`,
      chromium: browser.version(),
      date,
      runs: opts.runs,
      scope: b.scope,
      seedSeconds: b.seedSeconds,
      latency: [onPage, onList],
      openMs,
      openFrameMs,
      openLongTasks,
      openParts,
      warmMs,
      scroll,
      firstLoad: { files: sizes.files, js: sizes.js, css: sizes.css },
      lazy: sizes.lazy,
    };
  } finally {
    delete process.env.KAIROS_CONSOLE_DIR;
    b?.unsubscribe();
    await browser?.close();
    await b?.app.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

export function formatConsole(r: ConsoleBenchResult): string {
  const out: string[] = [];
  out.push(`(8) the console in Chromium ${r.chromium} (headless), ${r.date}; ${r.host}`);
  out.push(`  no BullMQ equivalent measured: BullMQ ships no console (bull-board, its UI, is not installed here)`);
  out.push("");
  out.push(
    table(
      ["status change → page", "p50", "p95", "p99", "max", "n"],
      r.latency.flatMap((l) => [
        [`${l.page}: in the DOM`, fmtMs(l.dom.p50), fmtMs(l.dom.p95), fmtMs(l.dom.p99), fmtMs(l.dom.max), fmtNum(l.dom.count)],
        [`${l.page}: painted (next frame)`, fmtMs(l.frame.p50), fmtMs(l.frame.p95), fmtMs(l.frame.p99), fmtMs(l.frame.max), fmtNum(l.frame.count)],
        [`${l.page}: from the mutation's request`, fmtMs(l.fromRequest.p50), fmtMs(l.fromRequest.p95), fmtMs(l.fromRequest.p99), fmtMs(l.fromRequest.max), fmtNum(l.fromRequest.count)],
      ]),
      { title: "  (a) from the run's updatedAt (stamped by the change) to the page; target p99 ≤ 200 ms" },
    ),
  );
  const open = summarize(r.openMs);
  const openF = summarize(r.openFrameMs);
  out.push("");
  out.push(`  (b) /runs with ${fmtNum(r.runs)} runs of the user in the store, ${r.scope} (seeded in ${r.seedSeconds.toFixed(1)} s); target ≤ 1 s`);
  out.push(`    cold load → ${ROWS} rows in the DOM: p50 ${fmtMs(open.p50)}, max ${fmtMs(open.max)} (each: ${r.openMs.map((m) => fmtMs(m)).join(", ")}); painted: p50 ${fmtMs(openF.p50)}, max ${fmtMs(openF.max)}; long tasks during the load: ${r.openLongTasks.join(", ")}`);
  const warm = summarize(r.warmMs);
  out.push(`    in the open app, Runs clicked on the jobs view → ${ROWS} rows in the DOM: p50 ${fmtMs(warm.p50)}, max ${fmtMs(warm.max)} (each: ${r.warmMs.map((m) => fmtMs(m)).join(", ")})`);
  out.push(
    table(
      ["cold load (ms after navigation start)", "index.html", "entry script", "runs view chunk", "API requests before the rows (start–end)", "rows in DOM", "painted", "long tasks before", "their total"],
      r.openMs.map((ms, i) => {
        const p = r.openParts[i]!;
        return [`#${i + 1}`, fmtMs(p.documentMs), fmtMs(p.entryScriptMs), fmtMs(p.viewChunkMs), p.api.map(([a, z]) => `${Math.round(a)}–${Math.round(z)}`).join(", ") || "—", fmtMs(ms), fmtMs(r.openFrameMs[i]), fmtNum(r.openLongTasks[i]), fmtMs(p.longTaskMs)];
      }),
      { indent: 4 },
    ),
  );
  out.push(
    table(
      ["scrolling", "seconds", "frames", "frame p50", "p95", "p99", "max", "> 25 ms", "long tasks", "their total", "longest", "rows loaded", "scrolled"],
      r.scroll.map((s) => [s.how, s.seconds.toFixed(1), fmtNum(s.frames), fmtMs(s.frame.p50), fmtMs(s.frame.p95), fmtMs(s.frame.p99), fmtMs(s.frame.max), fmtNum(s.dropped), fmtNum(s.longTasks), fmtMs(s.longTaskMs), fmtMs(s.longestTaskMs), fmtNum(s.rowsLoaded), `${fmtNum(s.scrolledPx)} px`]),
      { indent: 4 },
    ),
  );
  out.push("");
  out.push(`  (c) first load (index.html's entry, its static imports, CSS): JS ${kb(r.firstLoad.js.raw)} raw, ${kb(r.firstLoad.js.gzip)} gzip -9, ${kb(r.firstLoad.js.served)} as served (brotli); CSS ${kb(r.firstLoad.css.raw)} raw, ${kb(r.firstLoad.css.gzip)} gzip`);
  out.push(table(["first-load file", "raw", "gzip", "as served"], r.firstLoad.files.map((f) => [f.file, kb(f.raw), kb(f.gzip), kb(f.served)]), { indent: 4 }));
  out.push(table(["largest chunks loaded later", "raw", "gzip"], r.lazy.slice(0, 6).map((f) => [f.file, kb(f.raw), kb(f.gzip)]), { indent: 4 }));
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (n: string, d: number) => (process.argv.includes(n) ? Number(process.argv[process.argv.indexOf(n) + 1]) : d);
  const r = await benchConsole({ runs: arg("--runs", 100_000), changes: arg("--changes", 200), loads: arg("--loads", 5), scrollSeconds: arg("--scroll-seconds", 3), oneJob: process.argv.includes("--one-job") });
  console.log(formatConsole(r));
  // bench/index.ts runs this file as a child (it is typed with the DOM's lib, the rest is not) and reads the figures here.
  const jsonOut = process.argv.includes("--json-out") ? process.argv[process.argv.indexOf("--json-out") + 1] : null;
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(r));
  process.exit(0);
}

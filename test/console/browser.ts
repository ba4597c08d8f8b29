/**
 * The console's end-to-end harness: the whole product in-process (test/helpers/app.ts) and Debian's
 * Chromium driven by playwright-core, headless. Each test gets a fresh browser context (no shared
 * storage), and fails if the page logged an error or a Content-Security-Policy violation.
 *
 * Chromium is a test prerequisite (`.ci/run` installs it): without it the console's test files fail
 * with what to install, they are never skipped.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterAll, afterEach, beforeAll } from "vitest";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { login } from "../helpers/graphql.js";

export const CHROMIUM = process.env.KAIROS_CHROMIUM ?? "/usr/bin/chromium";

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the console's browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (Debian), or set KAIROS_CHROMIUM to its path`);
  }
}

/** Flags for a root, offline, headless Chromium (no sandbox: tests run as root; no calls home). */
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export interface ConsoleHarness {
  readonly app: TestApp;
  /** The console's root, e.g. http://localhost:PORT/ */
  readonly base: string;
  /** An administrator's token, for arranging data through the API. */
  readonly admin: string;
  readonly browser: Browser;
  /** A fresh context and page, not logged in. Problems the page reports fail the test. */
  page(): Promise<Page>;
  /** A fresh page logged in through the login form. */
  loggedIn(username?: string, password?: string): Promise<Page>;
}

/** One product and one Chromium for the file. */
export function useConsole(opts: Parameters<typeof startTestApp>[0] = {}): ConsoleHarness {
  let app: TestApp | undefined;
  let browser: Browser | undefined;
  let admin: string | undefined;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(opts), launchChromium()]);
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => {})));
    const seen = problems.splice(0);
    if (seen.length > 0) throw new Error(`the page reported problems:\n${seen.join("\n")}`);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
  });

  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("the console harness is not started yet: use it inside tests and hooks");
    return v;
  };
  const h: ConsoleHarness = {
    get app() {
      return need(app);
    },
    get base() {
      return need(app).url.replace(/\/graphql$/, "/");
    },
    get admin() {
      return need(admin);
    },
    get browser() {
      return need(browser);
    },
    async page() {
      const context = await need(browser).newContext({ viewport: { width: 1280, height: 800 } });
      contexts.push(context);
      const page = await context.newPage();
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      page.on("console", (m) => {
        // A refused credential is answered 401 by design; the resource error it logs is not a defect.
        if (m.type() === "error" && !/status of 40[13]/.test(m.text())) problems.push(`console.error: ${m.text()}`);
      });
      return page;
    },
    async loggedIn(username = ADMIN.username, password = ADMIN.password) {
      const page = await h.page();
      await page.goto(h.base);
      await page.getByLabel("Username").fill(username);
      await page.getByLabel("Password", { exact: true }).fill(password);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      return page;
    },
  };
  return h;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * axe-core's WCAG 2 A/AA rules on the page as it is; answers the serious and critical violations
 * (with where they are). Injected through the DevTools protocol, so the page's CSP stays on.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
  });
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Readable axe findings for an assertion message. */
export function describeViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`).join("\n");
}

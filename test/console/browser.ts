/// <reference lib="dom" />
/**
 * The console's end-to-end harness: the whole product in-process (test/helpers/app.ts) and Debian's
 * Chromium driven by playwright-core, headless. Each test gets a fresh browser context (no shared
 * storage), and fails if the page logged an error or a Content-Security-Policy violation.
 *
 * `loggedIn` does not type into the login form: it logs in through the API (once per user and file)
 * and puts that session where the console keeps it before the page loads, so a test spends its time
 * on what it tests. The form itself is tested through `loggedInWithForm` (test/console/login.test.ts,
 * and the tests about what the form sends).
 *
 * Chromium is a test prerequisite (`.ci/run` installs it): without it the console's test files fail
 * with what to install, they are never skipped.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterAll, afterEach, beforeAll } from "vitest";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk } from "../helpers/graphql.js";

export const CHROMIUM = process.env.KAIROS_CHROMIUM ?? "/usr/bin/chromium";

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the console's browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (Debian), or set KAIROS_CHROMIUM to its path`);
  }
}

/**
 * Flags for a root, offline, headless Chromium (no sandbox: tests run as root; no calls home).
 * Headless Chromium 156 opens every context's page in a new window with the browser's own UI, and
 * each window loads the address bar's WebUI popups (chrome://omnibox-popup.top-chrome, ~400
 * modules): seconds of CPU per window in a trace (bench/console.ts), beside the page under test. No
 * user's page pays that at load (their browser's window is already open), so it is switched off.
 */
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup"];

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
  /**
   * A fresh page, logged in as that user (the administrator by default), on the console's first
   * view. The session comes from the API's `login` (one per user and file, checked before each use)
   * and is put in sessionStorage before the console's script runs, as the login form would leave it.
   */
  loggedIn(username?: string, password?: string): Promise<Page>;
  /**
   * As `loggedIn`, but the tab's first document is the console at `path` (e.g. "runs/abc"), as a
   * deep link opens it: one page load instead of the first view's and then the one wanted.
   */
  loggedInAt(path: string, username?: string, password?: string): Promise<Page>;
  /** A fresh page logged in by typing into the login form and pressing Log in. */
  loggedInWithForm(username?: string, password?: string): Promise<Page>;
  /** The user's API session as `loggedIn` uses it (for a page made outside the harness: `openLoggedIn`). */
  session(username?: string, password?: string): Promise<ConsoleSession>;
}

/**
 * What the console keeps in sessionStorage under `kairos.session` once a password login succeeds
 * (console/src/auth/session.tsx, login-view.tsx).
 */
export interface ConsoleSession {
  credential: string;
  via: "password";
  user: { id: string; username: string; role: string };
  expiresAt: string | null;
}

export const SESSION_KEY = "kairos.session";

/** The login mutation the console sends (client/auth.graphql), so the session has the same fields. */
async function apiSession(url: string, username: string, password: string): Promise<ConsoleSession> {
  const d = await gqlOk<{ login: { token: string; expiresAt: string | null; user: ConsoleSession["user"] } }>(
    url,
    `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token expiresAt user { id username role } } }`,
    { u: username, p: password },
  );
  return { credential: d.login.token, via: "password", user: d.login.user, expiresAt: d.login.expiresAt };
}

/** One product and one Chromium for the file. */
export function useConsole(opts: Parameters<typeof startTestApp>[0] = {}): ConsoleHarness {
  let app: TestApp | undefined;
  let browser: Browser | undefined;
  let admin: string | undefined;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  /** One API login per user (and password) for the file. */
  const sessions = new Map<string, Promise<ConsoleSession>>();

  /**
   * The user's session, logging in only the first time. A test may have ended it since (revoked
   * tokens, a new password, a disabled user): a refused one is replaced by a new login.
   */
  async function sessionOf(username: string, password: string): Promise<ConsoleSession> {
    const key = JSON.stringify([username, password]);
    const cached = sessions.get(key);
    if (cached) {
      const s = await cached.catch(() => null);
      const fresh = s && (!s.expiresAt || Date.parse(s.expiresAt) > Date.now() + 60_000);
      if (s && fresh && !(await gql(need(app).url, "{ me { id } }", {}, s.credential)).errors) return s;
    }
    const made = apiSession(need(app).url, username, password);
    sessions.set(key, made);
    made.catch(() => sessions.delete(key));
    return made;
  }

  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(opts), launchChromium()]);
    const session = apiSession(app.url, ADMIN.username, ADMIN.password);
    sessions.set(JSON.stringify([ADMIN.username, ADMIN.password]), session);
    admin = (await session).credential;
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
    session: (username = ADMIN.username, password = ADMIN.password) => sessionOf(username, password),
    loggedIn: (username = ADMIN.username, password = ADMIN.password) => h.loggedInAt("", username, password),
    async loggedInAt(path, username = ADMIN.username, password = ADMIN.password) {
      const [session, page] = await Promise.all([sessionOf(username, password), h.page()]);
      await openLoggedIn(page, h.base, session, path);
      return page;
    },
    async loggedInWithForm(username = ADMIN.username, password = ADMIN.password) {
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

/**
 * Opens the console at `base` (or at `path` under it) in `page` already logged in with `session`: it
 * is put in sessionStorage before the console's script runs, as the login form would leave it. Only
 * the first document of the tab gets it: a later load (a reload after the console logged out) finds
 * what the console left there, as in a real tab.
 */
export async function openLoggedIn(page: Page, base: string, session: ConsoleSession, path = ""): Promise<void> {
  const seed = await page.addInitScript(
    ({ key, value, origin }) => {
      if (window === window.top && location.origin === origin && sessionStorage.getItem(key) === null) sessionStorage.setItem(key, value);
    },
    { key: SESSION_KEY, value: JSON.stringify(session), origin: new URL(base).origin },
  );
  try {
    await page.goto(new URL(path.replace(/^\//, ""), base).toString());
    await page.getByRole("navigation", { name: "Main" }).waitFor();
  } finally {
    await seed.dispose();
  }
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

/// <reference lib="dom" />
/**
 * The console's own attack tests (issue #28): what its answers say to the browser (CSP and the other
 * headers), what its file server refuses (traversal, unknown files), that it never shadows the API,
 * that the credential stays out of URLs, logs, cookies and localStorage, that the browser enforces
 * the CSP against injected script, and that the console is held to the same rate and cost limits as
 * any other client.
 */
import { request } from "node:http";
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { PASSWORD, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { openLoggedIn, useConsole } from "./browser.js";

/** Every line the product logs, at every level, kept for the "no token in logs" check. */
const logged: string[] = [];
const log = pino(
  { level: "trace" },
  new Writable({
    write(chunk, _enc, cb) {
      logged.push(String(chunk));
      cb();
    },
  }),
);

/** A small per-user request budget, so the console's own requests can be shown to meet it. */
const BUDGET = 150;
const h = useConsole({ log, env: { KAIROS_RATE_REQUESTS: `${BUDGET}/PT1M` } });

const PACKAGE_JSON = readFileSync(new URL("../../package.json", import.meta.url), "utf8");

/** A raw HTTP GET: the path is sent as written (fetch would normalise `..` and `%2e%2e` away). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(h.base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The entry script and stylesheet index.html names (real files under /assets). */
async function realAssets(): Promise<string[]> {
  const html = await (await fetch(h.base)).text();
  const found = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  expect(found.length).toBeGreaterThan(0);
  return found;
}

function expectConsoleHeaders(headers: Headers | Record<string, string | string[] | undefined>, where: string): void {
  const get = (n: string) => (headers instanceof Headers ? headers.get(n) : ((headers[n] as string | undefined) ?? null)) ?? "";
  const csp = get("content-security-policy");
  const directives = new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!, values]));
  expect(directives.get("script-src"), `${where}: script-src`).toEqual(["'self'"]);
  expect(directives.get("default-src"), `${where}: default-src`).toEqual(["'none'"]);
  expect(directives.get("frame-ancestors"), `${where}: frame-ancestors`).toEqual(["'none'"]);
  expect(directives.get("object-src"), `${where}: object-src`).toEqual(["'none'"]);
  expect(directives.get("base-uri"), `${where}: base-uri`).toEqual(["'none'"]);
  expect(csp, where).not.toMatch(/unsafe-inline|unsafe-eval|unsafe-hashes|wasm-unsafe-eval|\*/);
  expect(get("x-content-type-options"), where).toBe("nosniff");
  expect(get("referrer-policy"), where).toBe("no-referrer");
  expect(get("x-frame-options"), where).toMatch(/deny|sameorigin/i);
}

describe("console security: what the server answers", () => {
  // In a checkout shared with other test runs, one of them may be rebuilding dist/console (Vite
  // empties it first) as this file starts: wait for a whole build rather than report its absence.
  beforeAll(async () => {
    const deadline = Date.now() + 60_000;
    while ((await fetch(h.base)).status === 503 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
  }, 70_000);

  it("every console answer carries the CSP (no inline script, no eval, no framing), nosniff and no-referrer", async () => {
    for (const path of ["/", "/runs", "/runs/abc", "/jobs/x", "/dags/y/z", "/admin"]) {
      const res = await fetch(new URL(path, h.base), { headers: { accept: "text/html" } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(await res.text(), path).toContain('<div id="root">');
      expectConsoleHeaders(res.headers, path);
    }
    for (const asset of await realAssets()) {
      const res = await fetch(new URL(asset, h.base));
      expect(res.status, asset).toBe(200);
      expectConsoleHeaders(res.headers, asset);
      expect(res.headers.get("cache-control"), asset).toMatch(/immutable/);
      expect(res.headers.get("content-type"), asset).toMatch(asset.endsWith(".css") ? /^text\/css/ : /^(text|application)\/javascript/);
    }
  });

  it("index.html loads no inline script or style, only files from /assets", async () => {
    const html = await (await fetch(h.base)).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i); // every <script> has a src
    expect(html).not.toMatch(/<style\b/i);
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers
    for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(m[1]).toMatch(/^(\/assets\/|data:,$)/);
  });

  it("no path escapes dist/console: traversal, encoded and double-encoded variants are refused", async () => {
    const targets = ["package.json", "../package.json", "../../package.json", "../../../package.json"];
    const variants = (t: string) => {
      const up = t.split("/").length - 1; // how many ".." the target itself has
      const parts = ["..", ...Array<string>(up).fill("..")];
      const file = t.split("/").pop()!;
      const join = (dots: string, sep: string) => parts.map(() => dots).join(sep) + sep + file;
      return [
        `/assets/${join("..", "/")}`,
        `/assets/${join("%2e%2e", "/")}`,
        `/assets/${join("%2E%2E", "%2F")}`,
        `/assets/${join("..", "%2f")}`,
        `/assets/${join("..", "%5c")}`,
        `/assets/${join("..", "\\")}`,
        `/assets/${join("%252e%252e", "%252f")}`,
        `/assets/${join(".%2e", "/")}`,
        `/assets/${join("%c0%ae%c0%ae", "/")}`,
        `/${join("..", "%2f")}`,
        `/${join("%2e%2e", "%2f")}`,
        `/assets%2f${join("..", "%2f")}`,
      ];
    };
    const paths = new Set(targets.flatMap(variants));
    paths.add("/..%2fpackage.json");
    paths.add("/assets/..%2f..%2f..%2fetc%2fpasswd");
    paths.add("/assets/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd");
    paths.add("/assets//etc/passwd");
    paths.add("/assets/%00../package.json");
    for (const path of paths) {
      for (const accept of ["*/*", "text/html"]) {
        const res = await rawGet(path, { accept });
        expect(res.status, `${path} (${accept})`).not.toBe(200);
        expect(res.body, path).not.toContain('"devDependencies"');
        expect(res.body, path).not.toContain(PACKAGE_JSON.slice(0, 40));
        expect(res.body, path).not.toMatch(/root:x?:0:0/);
        expect(res.body, path).not.toContain('<div id="root">'); // not the page either: a file request
      }
    }
  });

  it("an unknown file under /assets is a 404, not index.html, and /assets lists nothing", async () => {
    for (const path of ["/assets/x.js", "/assets/index-00000000.js", "/assets/x.css", "/assets/", "/assets", "/favicon.ico", "/robots.txt", "/.vite/manifest.json", "/index.html.map"]) {
      const res = await rawGet(path, { accept: "text/html,*/*" });
      expect([301, 404], `${path}: ${res.status}`).toContain(res.status);
      expect(res.body, path).not.toContain('<div id="root">');
      expect(res.body, path).not.toMatch(/<a href=|Index of/i);
      if (res.status === 301) expect(res.headers.location, path).toMatch(/^\/assets\/?$/);
    }
  });

  it("the console never shadows the API: /graphql (GET and POST), /healthz, /readyz and /metrics answer as before, also to a browser", async () => {
    const gqlUrl = new URL("/graphql", h.base);
    const post = await fetch(gqlUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
    expect(post.status).toBe(200);
    expect(await post.json()).toEqual({ data: { __typename: "Query" } });
    const get = await rawGet(`/graphql?query=${encodeURIComponent("{ __typename }")}`, { accept: "application/json", "apollo-require-preflight": "1" });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body)).toEqual({ data: { __typename: "Query" } });
    for (const accept of ["application/json", "text/html", "*/*"]) {
      const asBrowser = await fetch(gqlUrl, { method: "POST", headers: { "content-type": "application/json", accept }, body: JSON.stringify({ query: "{ __typename }" }) });
      expect(await asBrowser.text(), `POST (${accept})`).not.toContain('<div id="root">');
      for (const path of [`/graphql?query=${encodeURIComponent("{ __typename }")}`, "/graphql", "/GraphQL", "/graphql/", "/graphql/x"]) {
        const page = await rawGet(path, { accept });
        expect(page.body, `${path} (${accept})`).not.toContain('<div id="root">');
      }
    }
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const res = await rawGet(path, { accept: "text/html" });
      expect(res.status, path).toBe(200);
      expect(res.body, path).not.toContain('<div id="root">');
    }
    expect((await rawGet("/metrics", { accept: "text/html" })).body).toMatch(/^# (HELP|TYPE) /m);
  });
});

/** Collects every URL a page asks for (HTTP and WebSocket), with the bodies it sends. */
function recordTraffic(page: Page): { urls: string[]; bodies: string[]; referers: string[] } {
  const t = { urls: [] as string[], bodies: [] as string[], referers: [] as string[] };
  page.on("request", (r) => {
    t.urls.push(r.url());
    const body = r.postData();
    if (body && !/"operationName":"Login"|mutation Login\b/.test(body)) t.bodies.push(body);
    const referer = r.headers().referer;
    if (referer) t.referers.push(referer);
  });
  page.on("websocket", (ws) => t.urls.push(ws.url()));
  page.on("framenavigated", (f) => t.urls.push(f.url()));
  return t;
}

async function visitViews(page: Page, paths: string[]): Promise<void> {
  for (const path of paths) {
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    await page.evaluate((p) => {
      history.pushState(null, "", p);
      dispatchEvent(new PopStateEvent("popstate"));
    }, path);
    await page.locator("h1").first().waitFor();
    await page.waitForLoadState("networkidle").catch(() => {});
  }
  // And one full load of a deep link: the session survives a reload from sessionStorage.
  await page.goto(new URL(paths[0]!, h.base).toString());
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

describe("console security: the credential", () => {
  it("neither the JWT nor an API key (nor the password) appears in any URL, request body, Referer, cookie, localStorage or log line", async () => {
    const user = await makeUser(h.app, h.admin, "sec-user");
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      h.app.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
      { i: { name: "sec-job", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } },
      user.token,
    );
    const { triggerJob } = await gqlOk<{ triggerJob: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: createJob.id }, user.token);
    const { createApiKey } = await gqlOk<{ createApiKey: { key: string } }>(
      h.app.url,
      `mutation { createApiKey(name: "console-sec", scope: READ_WRITE) { key } }`,
      {},
      user.token,
    );
    const apiKey = createApiKey.key;
    const views = ["/runs", `/runs/${triggerJob.id}`, "/jobs", `/jobs/${createJob.id}`, "/dags", "/nodes", "/dead-letters"];

    const page = await h.page();
    const traffic = recordTraffic(page);
    await page.goto(h.base);
    await page.getByLabel("Username").fill("sec-user");
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    const stored = await page.evaluate(() => sessionStorage.getItem("kairos.session"));
    const jwt = (JSON.parse(stored ?? "{}") as { credential?: string }).credential ?? "";
    expect(jwt).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/); // the credential is a JWT, in sessionStorage
    await visitViews(page, views);
    const jwtStorage = await page.evaluate(() => ({ local: Object.keys(localStorage).map((k) => `${k}=${localStorage.getItem(k)}`).join("\n"), cookie: document.cookie, names: Object.keys(sessionStorage) }));
    expect(jwtStorage.names).toEqual(["kairos.session"]);
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0); // logging out forgets it

    await page.getByRole("tab", { name: "API key" }).click();
    await page.getByLabel("API key").fill(apiKey);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("kairos.session"))).toContain(apiKey);
    await visitViews(page, views);
    const keyStorage = await page.evaluate(() => ({ local: Object.keys(localStorage).map((k) => `${k}=${localStorage.getItem(k)}`).join("\n"), cookie: document.cookie }));
    const cookies = await page.context().cookies();

    expect(traffic.urls.length).toBeGreaterThan(views.length * 2);
    expect(traffic.urls.some((u) => u.startsWith("ws://"))).toBe(true); // the live feed was opened
    const secrets = { jwt, apiKey, password: PASSWORD, jwtSignature: jwt.split(".")[2]! };
    const logText = logged.join("");
    expect(logText.length).toBeGreaterThan(0); // the capture works: the product did log
    for (const [name, secret] of Object.entries(secrets)) {
      for (const u of traffic.urls) expect(decodeURIComponent(u), `${name} in a URL`).not.toContain(secret);
      for (const b of traffic.bodies) expect(b, `${name} in a request body`).not.toContain(secret);
      for (const r of traffic.referers) expect(r, `${name} in a Referer`).not.toContain(secret);
      expect(logText, `${name} in the product's log`).not.toContain(secret);
      for (const s of [jwtStorage.local, jwtStorage.cookie, keyStorage.local, keyStorage.cookie]) expect(s, `${name} in localStorage or a cookie`).not.toContain(secret);
    }
    expect(cookies).toEqual([]);
    expect(traffic.referers).toEqual([]); // no-referrer: not even the page's own address is sent
  }, 120_000);
});

/** A page outside the harness's problem capture: these tests provoke CSP violations on purpose. */
async function bareConsolePage(as?: { username: string; password: string }): Promise<{ page: Page; pageErrors: string[]; close: () => Promise<void> }> {
  const context = await h.browser.newContext();
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  if (as) {
    await openLoggedIn(page, h.base, await h.session(as.username, as.password));
  } else {
    await page.goto(h.base);
    await page.getByRole("button", { name: "Log in" }).waitFor();
  }
  return { page, pageErrors, close: () => context.close() };
}

describe("console security: the CSP in the browser", () => {
  it("an injected inline script, inline event handler, javascript: URL and eval do not run, and the browser reports each violation", async () => {
    const { page, close } = await bareConsolePage();
    try {
      const r = await page.evaluate(async () => {
        const w = window as unknown as Record<string, unknown>;
        const violations: string[] = [];
        document.addEventListener("securitypolicyviolation", (e) => violations.push(e.effectiveDirective));
        const s = document.createElement("script");
        s.textContent = "window.__inline = 1";
        document.body.append(s);
        const img = document.createElement("img");
        img.setAttribute("onerror", "window.__handler = 1");
        img.src = "data:,not-an-image";
        document.body.append(img);
        const a = document.createElement("a");
        a.href = "javascript:window.__jsurl = 1";
        document.body.append(a);
        a.click();
        const d = document.createElement("script");
        d.src = "data:text/javascript,window.__data = 1";
        document.body.append(d);
        // Code made from strings, compiled by the page itself (a DevTools evaluation, as this one
        // is, may eval; the page's own tasks may not): a later task calls new Function, and a timer
        // is given a string.
        const evalResult = await new Promise<string>((res) =>
          setTimeout(() => {
            try {
              new Function("window.__eval = 1")();
              res("ran");
            } catch (e) {
              res((e as Error).name);
            }
          }, 0),
        );
        (setTimeout as unknown as (code: string, ms: number) => void)("window.__timer = 1", 0);
        await new Promise((res) => setTimeout(res, 300));
        return { ran: ["__inline", "__handler", "__jsurl", "__data", "__eval", "__timer"].filter((k) => k in w), evalResult, violations };
      });
      expect(r.ran).toEqual([]);
      expect(r.evalResult).toBe("EvalError");
      expect(r.violations).toEqual(expect.arrayContaining(["script-src-elem", "script-src-attr", "script-src"]));
      expect(r.violations.length).toBeGreaterThanOrEqual(5);
    } finally {
      await close();
    }
  });

  it("a job name and a run's name full of HTML and script render as text on the console's views, and nothing runs", async () => {
    const user = await makeUser(h.app, h.admin, "sec-html");
    const evil = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      h.app.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
      { i: { name: evil, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "echo '<script>window.__pwned=3</script>'" } } },
      user.token,
    );
    const { triggerJob } = await gqlOk<{ triggerJob: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: createJob.id }, user.token);
    const paths = ["/jobs", `/jobs/${createJob.id}`, `/runs?job=${createJob.id}`, `/runs/${triggerJob.id}`];
    const page = await h.loggedInAt(paths[0]!, "sec-html", PASSWORD);
    for (const [i, path] of paths.entries()) {
      if (i > 0) await page.goto(new URL(path, h.base).toString());
      await page.locator("main").getByText(evil).first().waitFor({ timeout: 15_000 }).catch(async (e: Error) => {
        throw new Error(`${path}: the name is not shown as text: ${e.message}\n${(await page.locator("main").innerText()).slice(0, 500)}`);
      });
      expect(await page.evaluate(() => "__pwned" in window), path).toBe(false);
      expect(await page.locator("main script, main img[onerror]").count(), path).toBe(0);
    }
    // The harness fails this test if the page reported a CSP violation: none was even attempted.
  }, 90_000);
});

describe("console security: the same limits as any client", () => {
  it("a user over the request budget sees the API's RATE_LIMITED message, with when to retry, in an alert; the console keeps working", async () => {
    const user = await makeUser(h.app, h.admin, "sec-limited");
    // Outside the harness's capture: the browser logs each refused request's 429 as an error.
    const { page, pageErrors, close } = await bareConsolePage({ username: "sec-limited", password: PASSWORD });
    // Spend the rest of the user's budget from outside the browser: the budget is the user's, not the client's.
    let refused = 0;
    for (let i = 0; i <= BUDGET && refused === 0; i++) {
      const r = await gql(h.app.url, "{ me { id } }", {}, user.token);
      if (r.errors?.[0]?.extensions?.code === "RATE_LIMITED") refused++;
    }
    expect(refused).toBe(1);
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    const alert = page.getByRole("alert").filter({ hasText: /too many requests/i }).first();
    await alert.waitFor({ timeout: 10_000 });
    expect(await alert.textContent()).toMatch(/at most \d+ per PT1M.*retry in \d+ s/);
    // Still the console: the frame, the navigation and the logout are there, and nothing threw.
    await page.getByRole("button", { name: "Log out" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem("kairos.session"))).not.toBeNull(); // not logged out by a 429
    expect(pageErrors).toEqual([]);
    await close();
  }, 90_000);

  it("a query over the cost limit sent from the console's origin with its credential is refused like any other", async () => {
    const user = await makeUser(h.app, h.admin, "sec-cost");
    // Outside the harness's capture: the browser logs the refused request's 400 as an error.
    const { page, close } = await bareConsolePage({ username: "sec-cost", password: PASSWORD });
    const r = await page.evaluate(async () => {
      const { credential } = JSON.parse(sessionStorage.getItem("kairos.session")!) as { credential: string };
      const query = "{ jobs(first: 100) { edges { node { id runs(first: 100) { edges { node { id history { status } } } } } } } }";
      const res = await fetch("/graphql", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${credential}` }, body: JSON.stringify({ query }) });
      return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string; limit?: string } }> } };
    });
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors?.[0]?.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "cost" });
    expect(r.body.errors?.[0]?.message).toMatch(/cost limit of \d+ exceeded.*KAIROS_MAX_COST/);
    // The same document from outside the browser gets the same answer.
    const direct = await gql(h.app.url, "{ jobs(first: 100) { edges { node { id runs(first: 100) { edges { node { id history { status } } } } } } } }", {}, user.token);
    expect(direct.errors?.[0]?.message).toBe(r.body.errors?.[0]?.message);
    await close();
  });
});


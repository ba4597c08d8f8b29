/**
 * Runs name their node with many nodes registered (issue #33): with 130 nodes, a run on a node
 * past the first 100 by name shows that node's name in the runs list, on its page (facts, attempts,
 * history) and among the dead letters; the runs filter's node picker finds any node by typing the
 * start of its name (20 suggestions at a time, "More nodes" for the next), by mouse and keyboard, and
 * keeps the choice in the address. Nodes and runs are documents written to the store.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { NodeDoc, RunDoc } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

const name = (i: number) => `zn-${String(i).padStart(3, "0")}`;

function nodeDoc(i: number): NodeDoc {
  return makeNode({ _id: `id-${name(i)}`, name: name(i), host: "run-nodes-host", pools: ["run-nodes"] });
}

/** A run that ended `status` on node `last`, its first attempt lost on node `first`. */
function endedRun(ownerId: string, status: "SUCCEEDED" | "DEAD", first: number, last: number, minutes: number): RunDoc {
  const at = new Date(Date.now() - minutes * 60_000);
  const [a, b] = [`id-${name(first)}`, `id-${name(last)}`];
  return queuedRunDoc(ownerId, {
    jobName: `ran-on-${name(last)}`,
    status,
    attempt: 2,
    retry: { maxAttempts: 2, backoff: "FIXED", initialMs: 1000, factor: 2, maxMs: 1000, jitter: "NONE", nonRetryableExitCodes: [] },
    scheduledFor: at,
    nodeId: b,
    startedAt: at,
    finishedAt: at,
    exitCode: status === "DEAD" ? 1 : 0,
    history: [
      { status: "QUEUED", at, reason: null, nodeId: null, attempt: 1 },
      { status: "RUNNING", at, reason: null, nodeId: a, attempt: null },
      { status: "QUEUED", at, reason: "node lost", nodeId: a, attempt: 1 },
      { status: "RUNNING", at, reason: null, nodeId: b, attempt: null },
      { status, at, reason: null, nodeId: b, attempt: 2 },
    ],
  });
}

const row = (page: Page, runId: string) => page.locator(`tr[data-run-id="${runId}"]`);
const options = (page: Page) => page.getByRole("listbox", { name: "Nodes" }).getByRole("option");
/** The picker's note once the suggestions for what was typed are in (those for earlier text may show meanwhile). */
const answered = (page: Page, note: string) => page.locator(".np-status", { hasText: note }).waitFor({ timeout: 15_000 });

describe("console: runs name their nodes among many", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    await h.app.services.mongo.c.nodes.insertMany(Array.from({ length: 130 }, (_, i) => nodeDoc(i)));
  });

  it("shows a node past the first 100 by name in the runs list, on the run's page and in the dead letters, and the picker finds it", async () => {
    const c = h.app.services.mongo.c;
    const user = await makeUser(h.app, h.admin, "run-nodes-viewer");
    // Past the first 100 nodes by name: at least 120 names sort before zn-120.
    const ran = endedRun(user.id, "SUCCEEDED", 119, 120, 3);
    const dead = endedRun(user.id, "DEAD", 5, 125, 2);
    const waiting = queuedRunDoc(user.id, { jobName: "never-started", pool: "run-nodes-nobody" });
    await c.runs.insertMany([ran, dead, waiting]);

    const page = await h.loggedIn("run-nodes-viewer", PASSWORD);
    await page.goto(new URL("/runs", h.base).toString());
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    await expect.poll(() => row(page, ran._id).locator("td.c-node").textContent(), { timeout: 15_000 }).toBe("zn-120");
    expect(await row(page, dead._id).locator("td.c-node").textContent()).toBe("zn-125");
    expect(await row(page, waiting._id).locator("td.c-node").textContent()).toBe("—");

    // The picker: the start of a name offers those nodes; picking one narrows the list and keeps its id in the address.
    const box = page.getByRole("combobox", { name: "Node" });
    await box.fill("zn-12");
    await answered(page, "10 nodes named “zn-12…”");
    expect(await options(page).locator(".np-name").allTextContents()).toEqual(Array.from({ length: 10 }, (_, i) => name(120 + i)));
    await options(page).filter({ hasText: "zn-120" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("node")).toBe("id-zn-120");
    await row(page, dead._id).waitFor({ state: "detached" });
    expect(await row(page, ran._id).count()).toBe(1);
    expect(await box.inputValue()).toBe("zn-120");

    // Opened from the address, the box shows the node's name; a run's page names its nodes.
    await page.reload();
    await expect.poll(() => page.getByRole("combobox", { name: "Node" }).inputValue(), { timeout: 15_000 }).toBe("zn-120");
    await row(page, ran._id).getByRole("link", { name: ran._id }).click();
    await page.getByRole("heading", { level: 1, name: /Run of ran-on-zn-120/ }).waitFor();
    const facts = page.locator("dl.facts").first();
    await expect.poll(() => facts.locator("dt", { hasText: /^Node$/ }).locator("xpath=following-sibling::dd[1]").textContent()).toBe("zn-120");
    const attempts = page.locator("table.attempts tbody tr");
    expect(await attempts.locator("td:nth-child(2)").allTextContents()).toEqual(["zn-119", "zn-120"]);

    await page.goto(new URL("/dead-letters", h.base).toString());
    await expect.poll(() => row(page, dead._id).locator("td.c-node").textContent(), { timeout: 15_000 }).toBe("zn-125");
  });

  it("pages the suggestions 20 at a time, picks with the keyboard, takes a pasted node id, and clears", async () => {
    const page = await h.loggedIn();
    await page.goto(new URL("/runs", h.base).toString());
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    const box = page.getByRole("combobox", { name: "Node" });
    await box.fill("zn-");
    await answered(page, "20+ nodes named “zn-…”");
    expect(await options(page).count()).toBe(21);
    expect(await options(page).last().textContent()).toBe("More nodes…");
    const violations = await axeViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);
    await options(page).last().click();
    await answered(page, "40+ nodes named “zn-…”");
    expect(await options(page).count()).toBe(41);
    expect(await options(page).nth(39).locator(".np-name").textContent()).toBe("zn-039");

    // Keyboard: down to the third, Enter picks it.
    await box.fill("zn-10");
    await answered(page, "10 nodes named “zn-10…”");
    for (let i = 0; i < 3; i++) await box.press("ArrowDown");
    expect(await box.getAttribute("aria-activedescendant")).toBe(await options(page).nth(2).getAttribute("id"));
    await box.press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("node")).toBe("id-zn-102");
    expect(await box.inputValue()).toBe("zn-102");

    // A whole name typed and Enter: that node. Text no name starts with: a node id.
    await box.fill("zn-007");
    await answered(page, "1 node named “zn-007…”");
    await box.press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("node")).toBe("id-zn-007");
    await box.fill("id-zn-050");
    await answered(page, "No node's name starts with “id-zn-050”");
    await box.press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("node")).toBe("id-zn-050");
    await expect.poll(() => box.inputValue()).toBe("zn-050");

    // Emptied and left: any node.
    await box.fill("");
    await page.getByRole("heading", { level: 1, name: "Runs" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("node")).toBeNull();
  });
});

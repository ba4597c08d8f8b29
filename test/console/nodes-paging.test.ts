/**
 * The console's Nodes view pages the `nodes` connection (issue #33) in Chromium: 50 nodes a page
 * by name, Next/Previous, a Pool box and a State choice; a node registered and one gone between
 * pages neither repeat nor hide the others. Nodes are node documents written to the store, as an
 * executor writes its own at start.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { NodeDoc, NodeStatus } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useConsole } from "./browser.js";

const h = useConsole();

function nodeDoc(name: string, pool: string, status: NodeStatus = "ONLINE"): NodeDoc {
  return makeNode({ _id: `id-${name}`, name, host: "paging-host", pools: [pool], status });
}

/** The names of the node cards shown, in order, once `first` is the first of them and `count` are shown. */
async function cards(page: Page, first: string, count: number): Promise<string[]> {
  const list = page.locator("article.node");
  await list.first().and(page.locator(`article[data-node="${first}"]`)).waitFor();
  await expect.poll(() => list.count(), { timeout: 15_000 }).toBe(count);
  return list.evaluateAll((els) => els.map((e) => e.getAttribute("data-node") ?? ""));
}

describe("console: nodes, a page at a time", { timeout: 120_000 }, () => {
  it("pages a pool's nodes 50 at a time while nodes come and go, and narrows them by state", async () => {
    const nodes = h.app.services.mongo.c.nodes;
    const names = Array.from({ length: 55 }, (_, i) => `pg-${String(i).padStart(2, "0")}`);
    await nodes.insertMany([...names.map((n) => nodeDoc(n, "paging")), nodeDoc("pg-gone-1", "paging", "DEAD"), nodeDoc("pg-gone-2", "paging", "OFFLINE")]);

    const page = await h.loggedIn();
    await page.goto(new URL("/nodes", h.base).toString());
    await page.getByRole("heading", { level: 1, name: "Nodes" }).waitFor();
    await page.getByLabel("Pool").fill("paging");
    const first = await cards(page, "pg-00", 50);
    expect(first).toEqual(names.slice(0, 50));
    await page.getByText("50 nodes on this page").waitFor();

    // Between the pages: one node registers ahead of the cursor, one not yet shown goes away, one shown goes away.
    await nodes.insertOne(nodeDoc("pg-99", "paging"));
    await nodes.deleteMany({ _id: { $in: ["id-pg-52", "id-pg-03"] } });
    const pager = page.getByRole("navigation", { name: "Nodes pages" });
    await pager.getByRole("button", { name: "Next →" }).click();
    await pager.getByText("Page 2").waitFor();
    // After pg-49: pg-52 gone, pg-99 new (digits sort before letters, so before pg-gone-*).
    expect(await cards(page, "pg-50", 7)).toEqual(["pg-50", "pg-51", "pg-53", "pg-54", "pg-99", "pg-gone-1", "pg-gone-2"]);
    expect(await pager.getByRole("button", { name: "Next →" }).isDisabled()).toBe(true);

    await pager.getByRole("button", { name: "← Previous" }).click();
    await pager.getByText("Page 1").waitFor();
    expect(await cards(page, "pg-00", 50)).not.toContain("pg-03");

    // State: the nodes gone (offline or dead) of the pool, on one page (no pager), from the first page again.
    await page.getByLabel("State").selectOption("gone");
    expect(await cards(page, "pg-gone-1", 2)).toEqual(["pg-gone-1", "pg-gone-2"]);
    expect(await page.getByRole("navigation", { name: "Nodes pages" }).count()).toBe(0);
    await page.getByLabel("Pool").fill("no-such-pool");
    await page.getByText("No node matches these filters.").waitFor();
    await nodes.deleteMany({ name: { $regex: "^pg-" } });
  });
});

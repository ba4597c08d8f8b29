/**
 * The runs filter's node picker when nodes share a name (console/src/views/runs/node-picker.tsx):
 * a restarted executor registers a new node under the same name, so "twin" may be an offline node
 * of last month and a healthy one of today. Typing the name and pressing Enter (or leaving the box)
 * picked the newest silently, and the box then showed "twin" whichever was chosen. Now a shared
 * name opens the list of its nodes to choose from, told apart by state, start and id, and the chosen
 * node's state and start are shown beside the box. Nodes are documents written to the store.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { NodeDoc } from "../../src/domain/index.js";
import { nodeDoc } from "../helpers/node-docs.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

const OLD: NodeDoc = nodeDoc({ _id: "6650c1f2e4b0a1b2c3d4e501", name: "twin", status: "OFFLINE", startedAt: new Date("2026-01-05T08:00:00Z"), pools: ["twins"] });
const NEW: NodeDoc = nodeDoc({ _id: "6650c1f2e4b0a1b2c3d4e502", name: "twin", status: "ONLINE", startedAt: new Date("2026-02-05T08:00:00Z"), pools: ["twins"] });
// Its name starts with "twin" but is not "twin": it is no twin of theirs.
const OTHER: NodeDoc = nodeDoc({ _id: "6650c1f2e4b0a1b2c3d4e503", name: "twin-b", startedAt: new Date("2026-02-06T08:00:00Z"), pools: ["twins"] });
const SOLO: NodeDoc = nodeDoc({ _id: "6650c1f2e4b0a1b2c3d4e504", name: "solo", startedAt: new Date("2026-02-07T08:00:00Z"), pools: ["twins"] });

const options = (page: Page) => page.getByRole("listbox", { name: "Nodes" }).getByRole("option");
const answered = (page: Page, note: string) => page.locator(".np-status", { hasText: note }).waitFor({ timeout: 15_000 });
const chosenNode = (page: Page) => new URL(page.url()).searchParams.get("node");

async function runsPage(path = "/runs"): Promise<{ page: Page; box: ReturnType<Page["getByRole"]> }> {
  const page = await h.loggedIn();
  await page.goto(new URL(path, h.base).toString());
  await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
  return { page, box: page.getByRole("combobox", { name: "Node" }) };
}

describe("console: the node picker tells nodes of one name apart", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    await h.app.services.mongo.c.nodes.insertMany([OLD, NEW, OTHER, SOLO]);
  });

  it("Enter on a name two nodes share opens them to choose from, each with its state, start and id; the older one can be chosen", async () => {
    const { page, box } = await runsPage();
    await box.fill("twin");
    // The list says, as soon as it is answered, that the name is two nodes'.
    await answered(page, "2 nodes are named “twin”: choose one by its state and start");
    await box.press("Enter");
    // Not picked: the list stays open on both, the newest first.
    await page.getByRole("listbox", { name: "Nodes" }).waitFor();
    expect(await box.getAttribute("aria-expanded")).toBe("true");
    expect(chosenNode(page)).toBeNull();
    const twins = options(page).filter({ has: page.locator(".np-name", { hasText: /^twin$/ }) });
    expect(await twins.count()).toBe(2);
    const facts = await twins.locator(".np-facts").allTextContents();
    expect(facts[0]).toContain("healthy, started");
    expect(facts[0]).toContain("…b2c3d4e502");
    expect(facts[1]).toContain("offline, started");
    expect(facts[1]).toContain("…b2c3d4e501");
    // A name of its own shows no id.
    expect(await options(page).filter({ hasText: "twin-b" }).locator(".np-facts").textContent()).not.toContain("…");
    const violations = await axeViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);

    // The first of them is active; down once more is the older one.
    expect(await box.getAttribute("aria-activedescendant")).toBe(await twins.first().getAttribute("id"));
    await box.press("ArrowDown");
    await box.press("Enter");
    await expect.poll(() => chosenNode(page)).toBe(OLD._id);
    expect(await box.inputValue()).toBe("twin");
    // Beside the box: which "twin" the list is filtered by.
    const which = page.locator("#rf-node-which");
    await expect.poll(() => which.textContent(), { timeout: 15_000 }).toMatch(/^offline, started /);
    expect(await box.getAttribute("aria-describedby")).toContain("rf-node-which");

    // Opened from the address, it says so too.
    await page.reload();
    await expect.poll(() => page.getByRole("combobox", { name: "Node" }).inputValue(), { timeout: 15_000 }).toBe("twin");
    await expect.poll(() => page.locator("#rf-node-which").textContent(), { timeout: 15_000 }).toMatch(/^offline, started /);
  });

  it("leaving the box on a shared name picks neither and says why; a name of one node is picked as before", async () => {
    const { page, box } = await runsPage();
    await box.fill("twin");
    await answered(page, "2 nodes are named “twin”");
    await page.getByRole("heading", { level: 1, name: "Runs" }).click();
    await expect.poll(() => page.locator("#rf-node-unpicked").textContent()).toBe("“twin” names 2 nodes: open the box and choose one");
    expect(chosenNode(page)).toBeNull();
    expect(await box.inputValue()).toBe("");

    await box.fill("solo");
    await answered(page, "1 node named “solo…”");
    expect(await page.locator("#rf-node-unpicked").count()).toBe(0);
    await box.press("Enter");
    await expect.poll(() => chosenNode(page)).toBe(SOLO._id);
    expect(await box.inputValue()).toBe("solo");
    await expect.poll(() => page.locator("#rf-node-which").textContent(), { timeout: 15_000 }).toMatch(/^healthy, started /);
  });
});

/**
 * The console's paged lists walk their connection forward and back the same way (ui/paging.ts,
 * a stack of cursors): the jobs list (25 a page) and the DAGs list (25 a page), in Chromium.
 * Page 2 shows the rest, Previous comes back to the same first page, and a filter applied on page 2
 * starts again at page 1.
 */
import { describe, expect, it } from "vitest";
import { gqlOk } from "../helpers/graphql.js";
import { useConsole } from "./browser.js";
import { dagApi } from "./dag-api.js";

const h = useConsole();
const { createDag } = dagApi(h);

const idle = (name: string, tags: string[] = []) =>
  gqlOk(h.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name, tags, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } }, h.admin);

describe("console: paged lists", { timeout: 120_000 }, () => {
  it("the jobs list: 30 jobs are 25 and 5, Previous comes back, a filter starts at page 1", async () => {
    for (let i = 0; i < 30; i++) await idle(`paged-${String(i).padStart(2, "0")}`, i < 3 ? ["few"] : []);
    const page = await h.loggedInAt("/jobs");
    const rows = page.locator("table.jobs-list tbody tr");
    const pager = page.getByRole("navigation", { name: "Pages" });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(25);
    const first = await rows.allInnerTexts();
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText("Page 2").waitFor();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(5);
    expect(await pager.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    const second = await rows.allInnerTexts();
    expect(second.filter((r) => first.includes(r))).toEqual([]);
    await pager.getByRole("button", { name: "Previous page" }).click();
    await pager.getByText("Page 1").waitFor();
    await expect.poll(() => rows.allInnerTexts(), { timeout: 15_000 }).toEqual(first);
    expect(await pager.getByRole("button", { name: "Previous page" }).isDisabled()).toBe(true);

    // On page 2, a filter: its results from their first page.
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText("Page 2").waitFor();
    await page.getByLabel("Tag").fill("few");
    await page.getByRole("button", { name: "Apply" }).click();
    await pager.getByText("Page 1").waitFor();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(3);
  });

  it("the DAGs list: 27 DAGs are 25 and 2, Newer comes back", async () => {
    for (let i = 0; i < 27; i++) await createDag(`paged-dag-${String(i).padStart(2, "0")}`, [{ key: "a", command: "true" }]);
    const page = await h.loggedInAt("/dags");
    const rows = page.locator("tr[data-dag]");
    const pager = page.getByRole("navigation", { name: "DAGs pages" });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(25);
    const first = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-dag")));
    await pager.getByRole("button", { name: /Older/ }).click();
    await pager.getByText("Page 2").waitFor();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    const second = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-dag")));
    expect(second.filter((d) => first.includes(d))).toEqual([]);
    await pager.getByRole("button", { name: /Newer/ }).click();
    await pager.getByText("Page 1").waitFor();
    await expect.poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-dag"))), { timeout: 15_000 }).toEqual(first);
  });
});

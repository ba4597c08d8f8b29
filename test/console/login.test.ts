/** The console's front door: logging in, out, and what an unknown or refused user sees. */
import { describe, expect, it } from "vitest";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

describe("console: login", () => {
  it("serves the console at / with a CSP that allows no inline script", async () => {
    const res = await fetch(h.base);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain('<div id="root">');
  });

  it("logs in with a password, shows the user, and logs out", async () => {
    const page = await h.loggedInWithForm();
    await page.locator(".who").getByText("admin", { exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/runs");
    // The credential is in no URL the console used.
    expect(page.url()).not.toMatch(/token|key/i);
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
  });

  it("says why a wrong password was refused and stays on the login page", async () => {
    const page = await h.page();
    await page.goto(h.base);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password", { exact: true }).fill("not-the-password");
    await page.getByRole("button", { name: "Log in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/password|credentials|invalid/i);
  });

  it("the login page has no serious accessibility violations", async () => {
    const page = await h.page();
    await page.goto(h.base);
    await page.getByRole("button", { name: "Log in" }).waitFor();
    const v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });
});

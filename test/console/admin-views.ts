/** What the administrator's console tests share (admin.test.ts, admin-sessions.test.ts): waiting, opening a view, unique names. */
import type { Page } from "playwright-core";
import type { ConsoleHarness } from "./browser.js";

/** `f`'s first truthy answer, asked every 100 ms for at most `ms`. */
export async function until<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let seq = 0;
/** A name no other test of the run uses. */
export const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;

export function adminViews(h: ConsoleHarness) {
  return {
    /** `page` moved to the view at `path`, once its heading is shown. */
    async gotoView(page: Page, path: string, heading: string): Promise<void> {
      await page.goto(new URL(path, h.base).toString());
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
    },
    /** A fresh page logged in (as the administrator unless told), whose first document is the view at `path`. */
    async openView(path: string, heading: string, username?: string, password?: string): Promise<Page> {
      const page = await h.loggedInAt(path, username, password);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      return page;
    },
  };
}

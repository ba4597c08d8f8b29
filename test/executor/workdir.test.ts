/**
 * Every run starts in an empty working directory of its own (mode 0700). The executor reuses a
 * directory a run left exactly as it got it, and replaces one a run left files in or changed.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { RunDoc } from "../../src/store/types.js";
import { useTestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";

// One slot: runs go one after the other, through the same directories.
const t = useTestApp({ env: { KAIROS_EXECUTOR_SLOTS: "1" } });
const caller: Principal = { userId: "000000000000000000000077", username: "dirs", role: "ADMIN" };

async function runOnce(name: string, command: string): Promise<RunDoc> {
  const job = await t.app.services.jobs.create(caller, { name, schedule: { kind: "ONCE", at: Date.now() + 3_600_000 }, spec: { kind: "COMMAND", command } });
  const run = await t.app.services.jobs.trigger(caller, job._id);
  return waitFor(async () => {
    const r = await t.app.services.runs.get(run._id);
    return r && ["SUCCEEDED", "FAILED"].includes(r.status) ? r : null;
  }, 10_000, 20);
}

/** `pwd`, then what the directory held and its mode, as the run saw them on arrival. */
const PROBE = 'echo "$PWD|$HOME|$(ls -A | tr "\\n" " ")|$(stat -c %a .)"';
const probe = (r: RunDoc) => {
  const [pwd, home, entries, mode] = r.outputTail!.trim().split("\n")[0]!.split("|");
  return { pwd: pwd!, home: home!, entries: entries!.trim(), mode: mode! };
};

describe("run working directories", () => {
  it("are empty and private on arrival, reused when left untouched, replaced when not", async () => {
    const a = probe(await runOnce("wd-a", PROBE));
    expect(a).toMatchObject({ entries: "", mode: "700" });
    expect(a.home).toBe(a.pwd);

    // Left as it was: the next run gets the same directory, still empty.
    const b = probe(await runOnce("wd-b", `${PROBE}; touch junk .hidden; mkdir sub`));
    expect(b).toMatchObject({ pwd: a.pwd, entries: "", mode: "700" });

    // The previous run left files: this one gets a new, empty directory, and the old one is gone.
    const c = probe(await runOnce("wd-c", `${PROBE}; chmod 755 .`));
    expect(c.pwd).not.toBe(b.pwd);
    expect(c).toMatchObject({ entries: "", mode: "700" });

    // The previous run changed its directory's mode: replaced too.
    const d = probe(await runOnce("wd-d", PROBE));
    expect(d.pwd).not.toBe(c.pwd);
    expect(d).toMatchObject({ entries: "", mode: "700" });

    const root = join(d.pwd, "..");
    const left = (await readdir(root)).filter((n) => n.startsWith("run-"));
    expect(left, "directories left behind besides the one kept for reuse").toEqual([d.pwd.slice(root.length + 1)]);
  });
});

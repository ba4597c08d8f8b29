/**
 * Every run starts in an empty, private working directory (/work, mode 0700, also HOME) and /tmp
 * of its own. What a run leaves there never reaches the next run in its slot; a run that changes
 * its directory gets it made again.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { useTestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";

// One slot: runs go one after the other, through the same slot.
const t = useTestApp({ env: { KAIROS_EXECUTOR_SLOTS: "1", KAIROS_SANDBOX: "bubblewrap" } });
const caller: Principal = { userId: "000000000000000000000077", username: "dirs", role: "ADMIN" };

async function runOnce(name: string, command: string): Promise<RunDoc> {
  const job = await t.app.services.jobs.create(caller, { name, schedule: { kind: "ONCE", at: Date.now() + 3_600_000 }, spec: { kind: "COMMAND", command } });
  const run = await t.app.services.jobs.trigger(caller, job._id);
  return waitFor(async () => {
    const r = await t.app.services.runs.get(run._id);
    return r && ["SUCCEEDED", "FAILED"].includes(r.status) ? r : null;
  }, 10_000, 20);
}

/** `pwd`, HOME, what /work and /tmp held and /work's mode, as the run saw them on arrival. */
const PROBE = 'echo "$PWD|$HOME|$(ls -A | tr "\\n" " ")|$(ls -A /tmp | tr "\\n" " ")|$(stat -c %a .)"';
const probe = (r: RunDoc) => {
  const [pwd, home, entries, tmp, mode] = r.outputTail!.trim().split("\n")[0]!.split("|");
  return { pwd: pwd!, home: home!, entries: entries!.trim(), tmp: tmp!.trim(), mode: mode! };
};

describe("run working directories", () => {
  it("are empty and private on arrival, whatever the run before left or changed", async () => {
    const a = probe(await runOnce("wd-a", PROBE));
    expect(a).toEqual({ pwd: "/work", home: "/work", entries: "", tmp: "", mode: "700" });

    const b = probe(await runOnce("wd-b", `${PROBE}; touch junk .hidden /tmp/junk; mkdir sub`));
    expect(b).toMatchObject({ entries: "", tmp: "", mode: "700" });

    // The previous run left files in /work and /tmp: this one sees none of them.
    const c = probe(await runOnce("wd-c", `${PROBE}; chmod 755 .`));
    expect(c).toMatchObject({ entries: "", tmp: "", mode: "700" });

    // The previous run changed its directory's mode: made again, private.
    const d = probe(await runOnce("wd-d", PROBE));
    expect(d).toMatchObject({ entries: "", tmp: "", mode: "700" });
  });
});

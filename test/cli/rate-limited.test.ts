/**
 * `kairos apply` past the server's rate limit: a refusal RATE_LIMITED ran nothing and names its wait
 * (extensions.retryAfterSeconds), so the command waits and sends it again (src/cli/client.ts),
 * saying so on stderr; it applied the first few of a folder and failed the rest, each "retry in 1 s".
 * In-process (runCli), against the product with a submission budget of 3 a second.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKairos } from "./in-process.js";
import { makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp({ env: { KAIROS_RATE_SUBMISSIONS: "3/PT1S" } });
let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kairos-rate-"));
  const jobs = Array.from({ length: 8 }, (_, i) => `---\nname: paced-${i}\nschedule: {kind: INTERVAL, every: PT1H}\nspec: {command: "true"}\n`);
  await writeFile(join(dir, "jobs.yaml"), jobs.join(""));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("kairos past the rate limit", () => {
  it("waits as the server asks and applies everything, saying so on stderr", async () => {
    const user = await makeUser(t.app, t.admin, "paced-user");
    const { code, out, err } = await runKairos(["apply", "-f", dir], { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: user.token } });
    expect(err).toMatch(/^\[kairos\] the server asks to slow down \(too many submissions for user paced-user: at most 3 per PT1S; retry in \d+ s\); waiting, and going on\n/);
    // Not once per wait: at most one note every 10 s.
    expect(err.match(/slow down/g)!.length).toBeLessThan(8);
    expect(code).toBe(0);
    for (let i = 0; i < 8; i++) expect(out).toContain(`job paced-${i} created`);
  });
});

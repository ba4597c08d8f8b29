/**
 * A refusal names what the person typed (src/cli/flag-names.ts): the flag, not the API argument or
 * input field it filled. `kairos forecast --within P99Y` said `within: years and months …`, the
 * GraphQL argument; `kairos audit --since … --until …` said `filter.to: must be after filter.from`.
 * And numbers given as flags are read as settings are, in decimal digits (src/cli/numbers.ts).
 * In-process (runCli) against the product.
 */
import { describe, expect, it } from "vitest";
import { runKairos, type InProcessRun } from "./in-process.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp();

const kairos = (...argv: string[]): Promise<InProcessRun> => runKairos(argv, { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: t.admin } });

const YEARS = 'years and months have no fixed length and are not accepted (got "P99Y")';

describe("refusals name the flag", () => {
  it("an argument the API refused is named by its flag: --within, --window, --factor, --min-runs", async () => {
    const f = await kairos("forecast", "--within", "P99Y");
    expect(f.code).toBe(2);
    expect(f.err).toMatch(new RegExp(`^kairos: --within: ${YEARS.replace(/[()]/g, "\\$&")}`));
    expect((await kairos("stats", "--window", "P99Y")).err).toMatch(/^kairos: --window: years and months/);
    // Named otherwise in the API (hotspotFactor, hotspotMinRuns): declared beside the options.
    expect((await kairos("forecast", "--factor", "0.5")).err).toMatch(/^kairos: --factor: must be .*1.*1000/);
    expect((await kairos("forecast", "--min-runs", "2000000")).err).toMatch(/^kairos: --min-runs: must be a whole number from 1 to \d+ \(got 2000000\)/);
    expect((await kairos("forecast", "--factor", "1e1")).err).toBe('kairos: --factor: "1e1" must be a number: it has an exponent (write 10); only decimal digits are read\n');
  });

  it("a filter's fields are named by their flags, in the message too: --until, --since, --outcome, --action, --pool", async () => {
    const range = await kairos("audit", "--since", "2021-01-01T00:00:00Z", "--until", "2020-01-01T00:00:00Z");
    expect(range.code).toBe(2);
    expect(range.err).toBe("kairos: --until: must be after --since (2021-01-01T00:00:00.000Z), got 2020-01-01T00:00:00.000Z\n");
    expect((await kairos("audit", "--outcome", "BOGUS")).err).toMatch(/^kairos: --outcome: "BOGUS" is not an outcome of a call; allowed: OK, /);
    expect((await kairos("audit", "--action", "bogusAction")).err).toMatch(/^kairos: --action: "bogusAction" is not a mutation of this API/);
    expect((await kairos("get", "nodes", "--pool", "a b")).err).toMatch(/^kairos: --pool: 1–64 characters/);
  });

  it("the schedule preview's refusals name --tz and --dst-gap; the expression's keep its field", async () => {
    expect((await kairos("schedule", "0 9 * * *", "--tz", "Nowhere/City")).err).toBe(
      'kairos: --tz: unknown IANA time zone "Nowhere/City"; use a name from the tz database such as "UTC", "Europe/Berlin" or "America/New_York"\n',
    );
    expect((await kairos("schedule", "0 9 * * *", "--dst-gap", "MAYBE")).err).toBe('kairos: --dst-gap: must be one of SHIFT, SKIP (got "MAYBE")\n');
    expect((await kairos("schedule", "61 * * * *")).err).toMatch(/^kairos: schedule: cron: minute field value 61/);
  });

  it("--params that is not JSON says where it stops parsing and what an object looks like", async () => {
    const r = await kairos("dag", "trigger", "etl", "--params", "{DEBUG: 1}");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^kairos: --params: not valid JSON \(.*position 1.*\); give an object in single quotes, such as --params '\{"DEBUG": "1"\}'\n$/);
  });

  it("numbers given as flags are decimal digits: --limit 0x10, --next 1e1, --from 1e3 are refused saying what to write", async () => {
    const limit = await kairos("get", "runs", "--limit", "0x10");
    expect(limit.code).toBe(2);
    expect(limit.err).toBe('kairos: --limit: "0x10" must be a whole number from 1 to 100: it is hexadecimal (write 16); only decimal digits are read\n');
    expect((await kairos("schedule", "PT1H", "--next", "1e1")).err).toBe('kairos: --next: "1e1" must be a whole number from 1 to 100: it has an exponent (write 10); only decimal digits are read\n');
    expect((await kairos("logs", "6650c1f2e4b0a1b2c3d4e5f6", "--from", "1e3")).err).toMatch(/^kairos: --from: "1e3" must be a whole number from 0 to \d+: it has an exponent \(write 1000\)/);
    expect((await kairos("audit", "--limit", " ")).err).toBe('kairos: --limit: " " must be a whole number from 1 to 10000: it is blank\n');
    // Past what the API's offset takes (a GraphQL Int), refused here: the API's refusal said "run … not found: offset: …".
    expect((await kairos("logs", "6650c1f2e4b0a1b2c3d4e5f6", "--from", "3000000000")).err).toBe('kairos: --from: "3000000000" must be a whole number from 0 to 2147483647\n');
    // A run that is not there is said once.
    expect((await kairos("describe", "run", "6650c1f2e4b0a1b2c3d4e5f6")).err).toBe('kairos: run "6650c1f2e4b0a1b2c3d4e5f6" not found: no run of yours has that id\n');
    expect((await kairos("logs", "6650c1f2e4b0a1b2c3d4e5f6")).err).toBe('kairos: run "6650c1f2e4b0a1b2c3d4e5f6" not found: no run of yours has that id\n');
    expect((await kairos("schedule", "PT1H", "--next", "3", "-o", "json")).code).toBe(0);
  });
});

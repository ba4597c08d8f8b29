/** The built `kairos` command line without a server: help, schedule previews, completion, the JSON Schema, usage errors. */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** Runs at once, at most: the runs here do not depend on each other and go side by side, two at a time (two cores). */
const AT_ONCE = 2;
let running = 0;
const queued: Array<() => void> = [];

/** One run of the command, a process of its own. */
async function kairos(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  if (running >= AT_ONCE) await new Promise<void>((r) => queued.push(r));
  running++;
  try {
    return await new Promise((resolve) => {
      const child = execFile(process.execPath, [join(ROOT, "bin", "kairos.js"), ...args], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", HOME: "/nonexistent" } }, (_e, out, err) =>
        resolve({ code: child.exitCode, out, err }),
      );
    });
  } finally {
    running--;
    queued.shift()?.();
  }
}

// Each start of node costs seconds on a loaded machine, and nothing here shares state: the tests run side by side (AT_ONCE).
describe.concurrent("kairos command line, offline", { timeout: 240_000 }, () => {
  it("lists both the CLI commands and the roles, and every command's --help has an example", async () => {
    // A sample; every command has the same examples block.
    const sample = ["login", "apply", "get", "logs", "run"];
    const [top, graph, trigger, ...helps] = await Promise.all([kairos("--help"), kairos("dag", "graph", "--help"), kairos("trigger", "--help"), ...sample.map((c) => kairos(c, "--help"))]);
    expect(top!.code).toBe(0);
    for (const c of ["login", "apply", "get", "logs", "run", "schedule", "why", "completion", "dev", "executor", "emit-schema"]) expect(top!.out).toContain(`  ${c}`);
    sample.forEach((c, i) => {
      expect(helps[i]!.code, c).toBe(0);
      expect(helps[i]!.out, c).toMatch(/Examples:\n {2}\$ /);
    });
    expect(graph!.out).toMatch(/Examples:/);
    expect(trigger!.out).toMatch(/124 +a followed run timed out/);
  });

  it("schedule previews fires offline with the DST change marked", async () => {
    const [r, gapOut, bad] = await Promise.all([
      kairos("schedule", "0 9 * * MON-FRI", "--tz", "Europe/Berlin", "--next", "3", "--from", "2026-03-27T00:00:00Z"),
      kairos("schedule", "30 2 * * *", "--tz", "Europe/Berlin", "--next", "3", "--from", "2026-03-28T00:00:00Z", "-o", "json"),
      kairos("schedule", "61 * * * *"),
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        "cron 0 9 * * MON-FRI in Europe/Berlin",
        "",
        "  2026-03-27T09:00:00+01:00  2026-03-27T08:00:00.000Z",
        "  -- DST change 2026-03-29T01:00:00.000Z: Europe/Berlin goes from +01:00 to +02:00 --",
        "  2026-03-30T09:00:00+02:00  2026-03-30T07:00:00.000Z",
        "  2026-03-31T09:00:00+02:00  2026-03-31T07:00:00.000Z",
        "",
      ].join("\n"),
    );
    const gap = JSON.parse(gapOut.out) as { fires: Array<{ dst: string | null }> };
    expect(gap.fires.map((f) => f.dst)).toEqual([null, "GAP_SHIFTED", null]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^kairos: schedule: cron: /);
  });

  it("schedule refuses what the API refuses: an abbreviation for a zone, an instant without one (not read in local time)", async () => {
    const [pst, local, from, instant] = await Promise.all([
      kairos("schedule", "0 9 * * *", "--tz", "PST"),
      kairos("schedule", "2030-01-01T09:00:00"),
      kairos("schedule", "PT1H", "--from", "tomorrow"),
      kairos("schedule", "2030-01-01T09:00:00+01:00", "-o", "json"),
    ]);
    expect(pst.code).toBe(2);
    expect(pst.err).toBe('kairos: --tz: "PST" is a time zone abbreviation, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "America/Los_Angeles", or "UTC"\n');
    expect(local.code).toBe(2);
    expect(local.err).toBe('kairos: schedule: "2030-01-01T09:00:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"\n');
    expect(from.code).toBe(2);
    expect(from.err).toMatch(/^kairos: --from: "tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z"/);
    expect(instant.out).toContain('"at": "2030-01-01T08:00:00.000Z"');
  });

  it("prints bash and zsh completion scripts naming the commands", async () => {
    const [bash, zsh, fish] = await Promise.all([kairos("completion", "bash"), kairos("completion", "zsh"), kairos("completion", "fish")]);
    expect(bash.code).toBe(0);
    expect(bash.out).toContain("complete -o default -F _kairos kairos");
    expect(bash.out).toMatch(/apply\) w="[^"]*--dry-run/);
    expect(zsh.out).toMatch(/^#compdef kairos/);
    expect(fish.code).toBe(2);
  });

  it("schema json is the committed schemas/kairos.schema.json", async () => {
    const r = await kairos("schema", "json");
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { definitions: Record<string, { required?: string[] }> };
    expect(schema.definitions.CreateJobInput!.required).toEqual(["name", "schedule", "spec"]);
    expect(r.out).toBe(readFileSync(join(ROOT, "schemas", "kairos.schema.json"), "utf8"));
  });

  it("usage errors exit 2 on stderr; no login exits 2 saying how to log in", async () => {
    const [r, unknown, nologin] = await Promise.all([kairos("get", "jobs", "--output", "xml"), kairos("apply"), kairos("get", "jobs")]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/required option '-f, --file <path...>' not specified/);
    expect(nologin.code).toBe(2);
    expect(nologin.err).toMatch(/no server: log in first/);
  });
});

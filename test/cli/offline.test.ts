/** The built `kairos` command line without a server: help, schedule previews, completion, the JSON Schema, usage errors. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const kairos = (...args: string[]) => {
  const r = spawnSync(process.execPath, [join(ROOT, "bin", "kairos.js"), ...args], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", HOME: "/nonexistent" } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe("kairos command line, offline", { timeout: 240_000 }, () => {
  it("lists both the CLI commands and the roles, and every command's --help has an example", () => {
    const top = kairos("--help");
    expect(top.code).toBe(0);
    for (const c of ["login", "apply", "get", "logs", "run", "schedule", "why", "completion", "dev", "executor", "emit-schema"]) expect(top.out).toContain(`  ${c}`);
    // A sample (each start of node costs seconds on a loaded machine); every command has the same examples block.
    for (const c of ["login", "apply", "get", "logs", "run"]) {
      const h = kairos(c, "--help");
      expect(h.code, c).toBe(0);
      expect(h.out, c).toMatch(/Examples:\n {2}\$ /);
    }
    expect(kairos("dag", "graph", "--help").out).toMatch(/Examples:/);
    expect(kairos("trigger", "--help").out).toMatch(/124 +a followed run timed out/);
  });

  it("schedule previews fires offline with the DST change marked", () => {
    const r = kairos("schedule", "0 9 * * MON-FRI", "--tz", "Europe/Berlin", "--next", "3", "--from", "2026-03-27T00:00:00Z");
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
    const gap = JSON.parse(kairos("schedule", "30 2 * * *", "--tz", "Europe/Berlin", "--next", "3", "--from", "2026-03-28T00:00:00Z", "-o", "json").out) as { fires: Array<{ dst: string | null }> };
    expect(gap.fires.map((f) => f.dst)).toEqual([null, "GAP_SHIFTED", null]);
    const bad = kairos("schedule", "61 * * * *");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^kairos: schedule: cron: /);
  });

  it("schedule refuses what the API refuses: an abbreviation for a zone, an instant without one (not read in local time)", () => {
    const pst = kairos("schedule", "0 9 * * *", "--tz", "PST");
    expect(pst.code).toBe(2);
    expect(pst.err).toBe('kairos: schedule: timezone: "PST" is a time zone abbreviation, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "America/Los_Angeles", or "UTC"\n');
    const local = kairos("schedule", "2030-01-01T09:00:00");
    expect(local.code).toBe(2);
    expect(local.err).toBe('kairos: schedule: "2030-01-01T09:00:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"\n');
    const from = kairos("schedule", "PT1H", "--from", "tomorrow");
    expect(from.code).toBe(2);
    expect(from.err).toMatch(/^kairos: --from: "tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z"/);
    expect(kairos("schedule", "2030-01-01T09:00:00+01:00", "-o", "json").out).toContain('"at": "2030-01-01T08:00:00.000Z"');
  });

  it("prints bash and zsh completion scripts naming the commands", () => {
    const bash = kairos("completion", "bash");
    expect(bash.code).toBe(0);
    expect(bash.out).toContain("complete -o default -F _kairos kairos");
    expect(bash.out).toMatch(/apply\) w="[^"]*--dry-run/);
    expect(kairos("completion", "zsh").out).toMatch(/^#compdef kairos/);
    expect(kairos("completion", "fish").code).toBe(2);
  });

  it("schema json is the committed schemas/kairos.schema.json", () => {
    const r = kairos("schema", "json");
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { definitions: Record<string, { required?: string[] }> };
    expect(schema.definitions.CreateJobInput!.required).toEqual(["name", "schedule", "spec"]);
    expect(r.out).toBe(readFileSync(join(ROOT, "schemas", "kairos.schema.json"), "utf8"));
  });

  it("usage errors exit 2 on stderr; no login exits 2 saying how to log in", () => {
    const r = kairos("get", "jobs", "--output", "xml");
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    const unknown = kairos("apply");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/required option '-f, --file <path...>' not specified/);
    const nologin = kairos("get", "jobs");
    expect(nologin.code).toBe(2);
    expect(nologin.err).toMatch(/no server: log in first/);
  });
});

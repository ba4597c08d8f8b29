/**
 * How `kairos` logs (issue #30): lines for people when `kairos dev` writes to a terminal, JSON
 * everywhere else and whenever KAIROS_LOG_FORMAT asks; and the dev banner that keeps the admin
 * password findable.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { adminPasswordFile, devBanner, keepAdminPassword } from "../../src/app/dev-banner.js";
import { loadConfig } from "../../src/config/index.js";
import { createLogger, logFormat } from "../../src/support/log.js";

/** A stream that keeps what is written to it. */
function sink(): Writable & { text(): string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text(): string };
  w.text = () => chunks.join("");
  return w;
}

describe("the log format", () => {
  it("is for people only for kairos dev on a terminal, unless asked", () => {
    expect(logFormat("auto", "dev", true)).toBe("pretty");
    expect(logFormat("auto", "dev", false)).toBe("json");
    for (const role of ["api", "scheduler", "executor"]) expect(logFormat("auto", role, true)).toBe("json");
    expect(logFormat("json", "dev", true)).toBe("json");
    expect(logFormat("pretty", "executor", false)).toBe("pretty");
  });

  it("KAIROS_LOG_FORMAT (or --log-format) is json, pretty or auto; anything else is refused saying so", () => {
    expect(loadConfig("dev", { KAIROS_LOG_FORMAT: "JSON" }).logFormat).toBe("json");
    expect(loadConfig("dev", {}).logFormat).toBe("auto");
    expect(() => loadConfig("dev", { KAIROS_LOG_FORMAT: "xml" })).toThrow('KAIROS_LOG_FORMAT: "xml" is not one of json, pretty, auto');
  });

  it("json: one object per line with the level's name and the fields", () => {
    const out = sink();
    createLogger("info", { role: "dev" }, "json", out).child({ component: "scheduler" }).info({ shards: 64 }, "acquired shards");
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: "info", role: "dev", component: "scheduler", shards: 64, msg: "acquired shards" });
  });

  it("pretty: one line a person reads, the component before the message and the fields after it", () => {
    const out = sink();
    createLogger("info", { role: "dev" }, "pretty", out).child({ component: "scheduler" }).info({ shards: 64 }, "acquired shards");
    const text = out.text();
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: scheduler: acquired shards \{"shards":64\}\n$/);
  });
});

describe("the dev banner", () => {
  const dir = mkdtempSync(join(tmpdir(), "kairos-banner-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const info = { url: "http://127.0.0.1:4000/graphql", adminUser: "admin", dataDir: dir, embeddedMongo: true, inMemoryQueues: true };

  it("keeps a generated password in a 0600 file of the data directory, and names it", () => {
    const source = keepAdminPassword({ dataDir: dir, adminPassword: null }, "s3cret-generated");
    expect(source).toEqual({ kind: "generated", password: "s3cret-generated", file: adminPasswordFile(dir) });
    expect(readFileSync(adminPasswordFile(dir), "utf8")).toBe("s3cret-generated\n");
    expect(statSync(adminPasswordFile(dir)).mode & 0o777).toBe(0o600);
    const text = devBanner({ ...info, password: source }, false);
    expect(text).toContain("Admin password (generated now): s3cret-generated");
    expect(text).toContain(`also kept in ${adminPasswordFile(dir)} (mode 0600)`);
    expect(text).toContain("Console: http://127.0.0.1:4000/");
    expect(text).not.toContain("\x1b[");
    expect(devBanner({ ...info, password: source }, true)).toContain("\x1b[1ms3cret-generated\x1b[22m");
  });

  it("names the file again at a later start; KAIROS_ADMIN_PASSWORD removes it", () => {
    const later = keepAdminPassword({ dataDir: dir, adminPassword: null }, null);
    expect(later).toEqual({ kind: "kept", file: adminPasswordFile(dir) });
    expect(devBanner({ ...info, password: later }, false)).toContain(`Admin password: the one generated at the first start, kept in ${adminPasswordFile(dir)}`);
    expect(keepAdminPassword({ dataDir: dir, adminPassword: "chosen" }, null)).toEqual({ kind: "environment" });
    expect(existsSync(adminPasswordFile(dir))).toBe(false);
  });

  it("a file left with a wider mode is made 0600 again", () => {
    writeFileSync(adminPasswordFile(dir), "old\n", { mode: 0o644 });
    keepAdminPassword({ dataDir: dir, adminPassword: null }, "fresh");
    expect(statSync(adminPasswordFile(dir)).mode & 0o777).toBe(0o600);
  });
});

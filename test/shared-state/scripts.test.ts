import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { allScripts } from "../../src/shared-state/redis/lua/all.js";

const luaDir = join(dirname(fileURLToPath(import.meta.url)), "../../src/shared-state/redis/lua");

describe("Lua scripts", () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(inject("redisUrl"));
  });
  afterAll(async () => {
    await redis.quit();
  });

  it.each(allScripts.map((s) => [s.name, s] as const))("%s compiles in Redis (SCRIPT LOAD)", async (_, script) => {
    expect(await redis.script("LOAD", script.lua)).toMatch(/^[0-9a-f]{40}$/);
  });

  it("one file per script, named <verb>-<numberOfKeys>.ts, each registered once", () => {
    const files = readdirSync(luaDir).filter((f) => /^[a-zA-Z]+-\d+\.ts$/.test(f)).sort();
    expect(files).toEqual(allScripts.map((s) => `${s.name}-${s.numberOfKeys}.ts`).sort());
    expect(new Set(allScripts.map((s) => s.name)).size).toBe(allScripts.length);
  });

  it.each(allScripts.map((s) => [s.name, s] as const))("%s documents exactly its KEYS and its Output in a header", (_, script) => {
    const header = /--\[\[([\s\S]*?)\]\]/.exec(script.lua)?.[1] ?? "";
    const documented = new Set([...header.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1])));
    expect([...documented].sort((a, b) => a - b)).toEqual(Array.from({ length: script.numberOfKeys }, (_, i) => i + 1));
    const used = new Set([...script.lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1])));
    expect(Math.max(...used)).toBe(script.numberOfKeys);
    expect(header).toMatch(/ARGV\[1\]/);
    expect(header).toMatch(/Output:/);
  });
});

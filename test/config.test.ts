import { describe, expect, it } from "vitest";
import { applyFlags, badPortReason, loadConfig } from "../src/config/index.js";
import { poolsSetting, sandboxSettings } from "../src/config/executor.js";
import { bool, int, rate, settingDuration, url } from "../src/config/parse.js";
import { schedulerSettings } from "../src/config/scheduler.js";
import { ConfigError } from "../src/domain/errors.js";
import { parseDuration } from "../src/timing/index.js";

describe("configuration", () => {
  it("has embedded defaults in dev and flags override the environment", () => {
    const c = loadConfig("dev", applyFlags(["--port", "5001", "--slots=3"], { KAIROS_PORT: "4999" }));
    expect(c).toMatchObject({ port: 5001, executorSlots: 3, host: "127.0.0.1", mongoUrl: null, redisUrl: null, shards: 64, leaseMs: 30_000, shardLeaseMs: 15_000, jwtTtlMs: 12 * 3600_000 });
  });

  it("names the bad setting and what is allowed", () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ KAIROS_PORT: "99999" }, /KAIROS_PORT: "99999" must be a whole number from 0 to 65535/],
      // A console no browser opens, and `kairos: cannot reach …: bad port`: it started there.
      [{ KAIROS_PORT: "6000" }, /KAIROS_PORT: port 6000 is one that browsers and Node's fetch refuse to connect to \(the Fetch standard's "bad ports"\): the console and kairos could not reach the API there; choose another, such as 4000/],
      [{ KAIROS_LOG_LEVEL: "loud" }, /KAIROS_LOG_LEVEL: "loud" is not one of fatal, error/],
      [{ MONGO_URL: "postgres://x" }, /MONGO_URL: scheme postgres: is not supported/],
      [{ KAIROS_JWT_SECRET: "short" }, /KAIROS_JWT_SECRET: must be at least 32 characters/],
      [{ KAIROS_LEASE: "30s" }, /KAIROS_LEASE: "30s" is not an ISO-8601 duration/],
      [{ KAIROS_SHARD_LEASE: "PT2S" }, /KAIROS_SHARD_LEASE: must be from PT6S to PT10M .*got "PT2S"/],
      [{ KAIROS_SHARD_LEASE: "PT1H" }, /KAIROS_SHARD_LEASE: must be from PT6S to PT10M/],
      [{ KAIROS_ALERT_TIMER_GRACE: "PT10M" }, /KAIROS_ALERT_TIMER_GRACE: must be from PT0.1S to PT5M, got "PT10M"/],
      [{ KAIROS_ALERT_TIMER_GRACE: "PT0.05S" }, /KAIROS_ALERT_TIMER_GRACE: must be from PT0.1S to PT5M/],
      [{ KAIROS_POOLS: "a b" }, /KAIROS_POOLS: pool name "a b"/],
      [{ KAIROS_ADMIN_PASSWORD: "123" }, /KAIROS_ADMIN_PASSWORD: at least 8 characters/],
    ];
    for (const [env, message] of bad) {
      expect(() => loadConfig("dev", env)).toThrow(ConfigError);
      expect(() => loadConfig("dev", env)).toThrow(message);
    }
    expect(loadConfig("dev", { KAIROS_SHARD_LEASE: "PT45S" }).shardLeaseMs).toBe(45_000);
    // The alert timers' grace: 5 s unless set (production), shrunk by the alert tests.
    expect(loadConfig("dev", {}).alerts.timerGraceMs).toBe(5_000);
    expect(loadConfig("dev", { KAIROS_ALERT_TIMER_GRACE: "PT1S" }).alerts.timerGraceMs).toBe(1_000);
    expect(() => applyFlags(["--prot", "1"], {})).toThrow(/unknown option --prot; allowed: --port/);
    expect(() => applyFlags(["--port"], {})).toThrow(/option --port needs a value/);
  });

  it("requires the stores and a JWT secret outside dev", () => {
    expect(() => loadConfig("api", {})).toThrow(/MONGO_URL is required for the api role/);
    expect(() => loadConfig("scheduler", { MONGO_URL: "mongodb://h:1" })).toThrow(/REDIS_URL is required for the scheduler role/);
    expect(() => loadConfig("api", { MONGO_URL: "mongodb://h:1", REDIS_URL: "redis://h:2" })).toThrow(/KAIROS_JWT_SECRET is required/);
    expect(loadConfig("executor", { MONGO_URL: "mongodb://h:1", REDIS_URL: "redis://h:2" }).host).toBe("0.0.0.0");
  });

  it("refuses a port browsers refuse for kairos dev only: the api role may sit behind a proxy on another port (it warns when it starts)", () => {
    expect(() => loadConfig("dev", { KAIROS_PORT: "6000" })).toThrow(/port 6000 is one that browsers/);
    expect(loadConfig("api", { MONGO_URL: "mongodb://h:1", REDIS_URL: "redis://h:2", KAIROS_JWT_SECRET: "x".repeat(32), KAIROS_PORT: "6000" }).port).toBe(6000);
    expect(badPortReason(6000)).toMatch(/^port 6000 is one that browsers and Node's fetch refuse/);
    expect(badPortReason(4000)).toBeNull();
  });
});

describe("API guard settings", () => {
  const distributed = { MONGO_URL: "mongodb://h:1", REDIS_URL: "redis://h:2", KAIROS_JWT_SECRET: "x".repeat(32) };

  it("has sane defaults; introspection and suggestions are on only in dev", () => {
    const dev = loadConfig("dev", {}).api;
    expect(dev).toMatchObject({
      query: { maxDepth: 10, maxAliases: 20, maxTokens: 1_000, maxDirectives: 20, maxCost: 10_000, maxSubscriptionCost: 1_000, introspection: true, fieldSuggestions: true },
      requestRate: { points: 1_200, durationMs: 60_000 },
      submissionRate: { points: 120, durationMs: 60_000 },
      login: { freeFailures: 3, lockoutAfter: 10, addressFreeFailures: 10, addressLockoutAfter: 100, delayMs: 1_000, lockoutMs: 900_000, windowMs: 3_600_000 },
      maxBodyBytes: 2_097_152,
      trustProxyHops: 0,
    });
    const api = loadConfig("api", distributed).api.query;
    expect(api).toMatchObject({ introspection: false, fieldSuggestions: false });
    expect(loadConfig("api", { ...distributed, KAIROS_INTROSPECTION: "true" }).api.query.introspection).toBe(true);
  });

  it("reads rates as N/duration or off, and names bad values", () => {
    expect(loadConfig("dev", { KAIROS_RATE_REQUESTS: "10/PT1S", KAIROS_RATE_SUBMISSIONS: "off" }).api).toMatchObject({
      requestRate: { points: 10, durationMs: 1_000 },
      submissionRate: null,
    });
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ KAIROS_RATE_REQUESTS: "lots" }, /KAIROS_RATE_REQUESTS: "lots" must be N\/duration/],
      [{ KAIROS_RATE_SUBMISSIONS: "0/PT1M" }, /KAIROS_RATE_SUBMISSIONS: "0\/PT1M" must be N\/duration with N ≥ 1/],
      [{ KAIROS_MAX_DEPTH: "1" }, /KAIROS_MAX_DEPTH: "1" must be a whole number from 2 to 100/],
      [{ KAIROS_INTROSPECTION: "maybe" }, /KAIROS_INTROSPECTION: "maybe" must be true or false/],
      [{ KAIROS_LOGIN_FREE_FAILURES: "10", KAIROS_LOGIN_LOCKOUT_AFTER: "5" }, /KAIROS_LOGIN_FREE_FAILURES \(10\) must be below KAIROS_LOGIN_LOCKOUT_AFTER \(5\)/],
      [{ KAIROS_LOGIN_LOCKOUT: "15m" }, /KAIROS_LOGIN_LOCKOUT: "15m" is not an ISO-8601 duration; write "PT15M"/],
    ];
    for (const [env, message] of bad) expect(() => loadConfig("dev", env)).toThrow(message);
  });

  it("reads KAIROS_MAX_WAITING_RUNS as a whole number or off (default 10000), and names bad values", () => {
    expect(loadConfig("dev", {}).maxWaitingRuns).toBe(10_000);
    expect(loadConfig("dev", { KAIROS_MAX_WAITING_RUNS: "" }).maxWaitingRuns).toBe(10_000);
    expect(loadConfig("dev", { KAIROS_MAX_WAITING_RUNS: "250" }).maxWaitingRuns).toBe(250);
    expect(loadConfig("dev", { KAIROS_MAX_WAITING_RUNS: "off" }).maxWaitingRuns).toBeNull();
    expect(loadConfig("dev", { KAIROS_MAX_WAITING_RUNS: "OFF" }).maxWaitingRuns).toBeNull();
    for (const bad of ["0", "-1", "1.5", "1e3", "lots", "100000001"]) {
      expect(() => loadConfig("dev", { KAIROS_MAX_WAITING_RUNS: bad })).toThrow(`KAIROS_MAX_WAITING_RUNS: "${bad}" must be a whole number from 1 to 100000000, or off`);
    }
  });
});

describe("setting readers (src/config/parse.ts)", () => {
  it("reads ISO-8601 durations and refuses other forms", () => {
    expect(settingDuration("X", "PT30S")).toBe(30_000);
    expect(settingDuration("X", " P1DT1H1M1.5S ")).toBe((86_400 + 3_600 + 60 + 1.5) * 1000);
    for (const raw of ["P", "PT", "30s", "PT-1S"]) expect(() => settingDuration("X", raw)).toThrow(/X: ".*" is not an ISO-8601 duration/);
    expect(() => settingDuration("X", "PT0S")).toThrow(/X: duration must be positive/);
  });

  it("reads durations with the API's one grammar: a setting and an API field accept and refuse the same text", () => {
    const texts = ["PT30S", "pt5m", "P2W", "P1DT2H", "PT0.25S", "PT1.5H", "P1M", "P1Y", "PT1.0001S", "-PT5S", "PT", "5m", "P36501D"];
    for (const text of texts) {
      let api: number | string;
      try {
        api = parseDuration(text, "X");
      } catch (err) {
        api = (err as Error).message;
      }
      let setting: number | string;
      try {
        setting = settingDuration("X", text);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        setting = (err as Error).message;
      }
      expect(setting, text).toEqual(api);
    }
    expect(settingDuration("X", "P2W")).toBe(14 * 86_400_000);
  });

  it("reads whole numbers, booleans and URLs with their defaults when unset or empty", () => {
    expect(int("N", undefined, 7, 0, 10)).toBe(7);
    expect(int("N", "", 7, 0, 10)).toBe(7);
    expect(int("N", "10", 7, 0, 10)).toBe(10);
    for (const raw of ["11", "-1", "1.5", "x"]) expect(() => int("N", raw, 7, 0, 10)).toThrow(`N: "${raw}" must be a whole number from 0 to 10`);
    expect([bool("B", "yes", false), bool("B", "OFF", true), bool("B", "", true)]).toEqual([true, false, true]);
    expect(() => bool("B", "maybe", true)).toThrow(/B: "maybe" must be true or false/);
    expect(url("U", undefined, ["redis:"])).toBeNull();
    expect(url("U", "redis://h:1", ["redis:"])).toBe("redis://h:1");
    expect(() => url("U", "not a url", ["redis:"])).toThrow(/U: "not a url" is not a URL; expected redis:\/\/host:port/);
  });

  it("reads rates of at least one point per second or more", () => {
    expect(rate("R", undefined, "5/PT1M")).toEqual({ points: 5, durationMs: 60_000 });
    expect(rate("R", "OFF", "5/PT1M")).toBeNull();
    expect(() => rate("R", "5/PT0.5S", "off")).toThrow(/R: the duration must be at least PT1S/);
  });
});

describe("role settings (src/config/)", () => {
  it("scheduler: stage-ahead can be switched off and is bounded", () => {
    expect(schedulerSettings({})).toEqual({ shardLeaseMs: 15_000, stageAheadMs: 10_000, catchupWindowMs: 3_600_000 });
    expect(schedulerSettings({ KAIROS_STAGE_AHEAD: "PT0S" }).stageAheadMs).toBe(0);
    expect(() => schedulerSettings({ KAIROS_STAGE_AHEAD: "PT6M" })).toThrow(/KAIROS_STAGE_AHEAD: must be from PT0S \(off\) to PT5M/);
  });

  it("executor: pools are trimmed and named; egress needs a /16 subnet", () => {
    expect(poolsSetting({ KAIROS_POOLS: " a, b ,," })).toEqual(["a", "b"]);
    expect(() => poolsSetting({ KAIROS_POOLS: " , " })).toThrow(/KAIROS_POOLS: name at least one pool/);
    expect(sandboxSettings(false, {}).egress).toBeNull();
    expect(() => sandboxSettings(false, { KAIROS_EGRESS_DENY: "10.0.0.0/8" })).toThrow(/set KAIROS_EGRESS_SUBNET too/);
    expect(sandboxSettings(false, { KAIROS_EGRESS_SUBNET: "10.231.0.0/16", KAIROS_EGRESS_DENY: "10.0.0.0/8" }).egress).toEqual({
      subnet: "10.231.0.0/16",
      deny: ["10.0.0.0/8"],
    });
    expect(() => sandboxSettings(false, { KAIROS_RUN_DEFAULTS: "cpu=4", KAIROS_RUN_MAX: "cpu=2" })).toThrow(/KAIROS_RUN_DEFAULTS: cpu 4 is above KAIROS_RUN_MAX's 2/);
  });

  it("reads the settings in a fixed order: with several bad ones, the first error is the same", () => {
    const env = { KAIROS_LOG_LEVEL: "loud", KAIROS_POOLS: "a b", KAIROS_PORT: "x" };
    expect(() => loadConfig("dev", env)).toThrow(/KAIROS_LOG_LEVEL/);
    expect(() => loadConfig("dev", { ...env, KAIROS_LOG_LEVEL: "info" })).toThrow(/KAIROS_POOLS/);
    expect(() => loadConfig("dev", { KAIROS_ADMIN_USER: "x", KAIROS_PORT: "x" })).toThrow(/KAIROS_ADMIN_USER/);
  });
});

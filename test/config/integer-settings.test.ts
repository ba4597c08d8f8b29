/**
 * Every whole-number setting is read by one reader (domain/decimal-text.ts readWholeNumber,
 * through config/parse.ts int and intOrOff): plain decimal digits. Number() read `1e3` as 1000,
 * `0x10` as 16 and a blank value as 0, so KAIROS_PORT=0x10 listened on port 16 and a setting
 * pasted from another language's habits was silently some other number.
 *
 * The settings are taken from docs/configuration.md (each row whose default is a plain number),
 * so a new whole-number setting documented there is held to the same reader.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, loadRoleConfig } from "../../src/config/index.js";
import { tracingSettings } from "../../src/config/tracing.js";
import { ConfigError, readDecimal, readWholeNumber } from "../../src/domain/index.js";

const DOCS = readFileSync(join(import.meta.dirname, "..", "..", "docs", "configuration.md"), "utf8");

/** The documented settings whose default is a whole number (`| KAIROS_PORT | --port | 4000 | …`), and those whose default is not a number. */
function wholeNumberSettings(): Array<{ name: string; value: string }> {
  const rows = [...DOCS.matchAll(/^\| `([A-Z0-9_]+)` \|[^|]*\| (\d+)(?: \([^|]*\))? \|/gm)].map((m) => ({ name: m[1]!, value: m[2]! }));
  return [...rows, { name: "KAIROS_EXECUTOR_SLOTS", value: "3" }, { name: "KAIROS_METRICS_PORT", value: "9464" }];
}

const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig("dev", env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
};

describe("whole-number settings", () => {
  it("finds the documented ones", () => {
    const names = wholeNumberSettings().map((s) => s.name);
    for (const n of ["KAIROS_PORT", "KAIROS_SHARDS", "KAIROS_MAX_WAITING_RUNS", "KAIROS_MAX_BODY_BYTES", "KAIROS_LOG_MAX_BYTES", "KAIROS_SANDBOX_UID_BASE", "KAIROS_ALERT_MAX_RULES"]) expect(names).toContain(n);
    expect(names.length).toBeGreaterThanOrEqual(20);
  });

  it("each takes decimal digits and refuses 1e3, 0x10, 0b11, 1000.0 and a blank value, saying what it was and what is allowed", () => {
    for (const { name, value } of wholeNumberSettings()) {
      expect(() => loadConfig("dev", { [name]: value }), `${name}=${value}`).not.toThrow();
      expect(refusal({ [name]: "1e3" }), name).toMatch(new RegExp(`^${name}: "1e3" must be a whole number from \\d+ to \\d+(, or off)?: it has an exponent \\(write 1000\\); only decimal digits are read$`));
      expect(refusal({ [name]: "0x10" }), name).toMatch(new RegExp(`^${name}: "0x10" must be a whole number from \\d+ to \\d+(, or off)?: it is hexadecimal \\(write 16\\); only decimal digits are read$`));
      expect(refusal({ [name]: "0b11" }), name).toMatch(/: it is binary \(write 3\)/);
      expect(refusal({ [name]: `${value}.0` }), name).toMatch(new RegExp(`^${name}: "${value}\\.0" must be a whole number from .*: it has a fraction$`));
    }
    // A blank KAIROS_PORT was port 0 (any free port): the console's address then changed each start.
    expect(refusal({ KAIROS_PORT: "  " })).toBe('KAIROS_PORT: "  " must be a whole number from 0 to 65535: it is blank');
    expect(refusal({ KAIROS_PORT: "99999" })).toBe('KAIROS_PORT: "99999" must be a whole number from 0 to 65535');
    expect(loadConfig("dev", { KAIROS_PORT: " 4001 " }).port).toBe(4001);
  });

  it("a flag names itself: kairos dev --port 0x10 is refused under --port", () => {
    expect(() => loadRoleConfig("dev", ["--port", "0x10"], {})).toThrow('--port (KAIROS_PORT): "0x10" must be a whole number from 0 to 65535: it is hexadecimal (write 16); only decimal digits are read');
    expect(() => loadRoleConfig("dev", ["--slots=1e1"], {})).toThrow(/^--slots \(KAIROS_EXECUTOR_SLOTS\): "1e1" must be a whole number from 1 to 1024: it has an exponent/);
    // From the environment, the setting's own name.
    expect(() => loadRoleConfig("dev", [], { KAIROS_PORT: "0x10" })).toThrow(/^KAIROS_PORT: "0x10"/);
    expect(loadRoleConfig("dev", ["--port", "5001"], { KAIROS_PORT: "0x10" }).port).toBe(5001);
  });

  it("resource settings and the trace ratio are decimal too", () => {
    expect(refusal({ KAIROS_RUN_DEFAULTS: "memoryMb=1e3" })).toBe('KAIROS_RUN_DEFAULTS: memoryMb: must be a whole number of MiB from 16 to 4194304 (got "1e3": it has an exponent (write 1000); only decimal digits are read)');
    expect(refusal({ KAIROS_RUN_MAX: "cpu=0x2" })).toMatch(/^KAIROS_RUN_MAX: cpu: must be a number of cores from 0\.01 to 1024 \(got "0x2": it is hexadecimal \(write 2\)/);
    expect(loadConfig("dev", { KAIROS_RUN_DEFAULTS: "cpu=0.5,memoryMb=256" }).runDefaults).toMatchObject({ cpu: 0.5, memoryMb: 256 });
    expect(() => tracingSettings({ KAIROS_OTLP_ENDPOINT: "http://o:4318", KAIROS_TRACE_SAMPLE_RATIO: "0x1" })).toThrow('KAIROS_TRACE_SAMPLE_RATIO: "0x1" must be a number from 0 to 1 (the share of new traces kept): it is hexadecimal (write 1); only decimal digits are read');
    expect(tracingSettings({ KAIROS_OTLP_ENDPOINT: "http://o:4318", KAIROS_TRACE_SAMPLE_RATIO: ".25" })?.sampleRatio).toBe(0.25);
  });

  it("the reader: digits with an optional sign; a fraction only where one is allowed", () => {
    expect(readWholeNumber("042", 0, 100)).toEqual({ value: 42 });
    expect(readWholeNumber("+7", 0, 100)).toEqual({ value: 7 });
    expect(readWholeNumber("-1", 0, 100)).toEqual({ problem: '"-1" must be a whole number from 0 to 100' });
    expect(readWholeNumber("1e-3", 0, 100)).toEqual({ problem: '"1e-3" must be a whole number from 0 to 100: it has an exponent; only decimal digits are read' });
    expect(readWholeNumber("Infinity", 0, 100)).toEqual({ problem: '"Infinity" must be a whole number from 0 to 100: it is not a finite number; only decimal digits are read' });
    expect(readWholeNumber("9".repeat(30), 0, Number.MAX_SAFE_INTEGER)).toEqual({ problem: `"${"9".repeat(30)}" must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}` });
    expect(readWholeNumber("ten", 0, 100, "off")).toEqual({ problem: '"ten" must be a whole number from 0 to 100, or off: it is not a number' });
    expect(readDecimal("0.5", false)).toEqual({ value: 0.5 });
    expect(readDecimal("1.", false)).toEqual({ value: 1 });
    expect(readDecimal("1.5", true)).toEqual({ problem: "has a fraction" });
    expect(readDecimal("1e1", false)).toEqual({ problem: "has an exponent (write 10); only decimal digits are read" });
  });
});

/** The job kinds' pure rules: spec checks, success statuses, signatures, ready-queue names. */
import { describe, expect, it } from "vitest";
import { formatStatusRange, isSuccessStatus, specArtifact, validateHttp } from "../../src/core/job-kinds.js";
import { signatureHeader, signatureOf, verifySignature } from "../../src/core/http-signing.js";
import { validateSpec } from "../../src/core/spec.js";
import { poolOfQueue, readyQueueOf, readyQueuesFor } from "../../src/domain/job-kinds.js";

describe("validateSpec by kind", () => {
  it("keeps COMMAND specs as they were", () => {
    const s = validateSpec({ kind: "COMMAND", command: "echo hi" });
    expect(s).toMatchObject({ kind: "COMMAND", command: "echo hi", argv: null, pool: "default" });
    expect(s.script).toBeUndefined();
  });

  it("stores a SCRIPT with its interpreter, source and args, and the common fields", () => {
    const s = validateSpec({ kind: "SCRIPT", interpreter: "bash", source: "echo $1", args: ["a"], env: { A: "1" }, pool: "gpu", timeout: "PT5M" });
    expect(s).toMatchObject({ kind: "SCRIPT", command: null, argv: null, env: { A: "1" }, pool: "gpu", timeoutMs: 300_000, artifactId: null });
    expect(s.script).toEqual({ interpreter: "bash", source: "echo $1", artifact: null, args: ["a"] });
  });

  it("gives HTTP jobs a 30 s default timeout and a slot's nominal resources, and refuses program-only fields", () => {
    const s = validateSpec({ kind: "HTTP", http: { url: "https://example.com/x" } });
    expect(s.timeoutMs).toBe(30_000);
    expect(s.resources).toEqual({ cpu: 0.01, memoryMb: 16, pids: 8, diskMb: 1 });
    expect(s.http).toEqual({ method: "POST", url: "https://example.com/x", headers: {}, body: null, successStatuses: [[200, 299]] });
    expect(() => validateSpec({ kind: "HTTP", http: { url: "https://example.com" }, env: { A: "1" } })).toThrow(/HTTP jobs run no program/);
    expect(() => validateSpec({ kind: "HTTP", http: { url: "https://example.com" }, network: "EGRESS" })).toThrow(/network applies to programs only/);
    expect(() => validateSpec({ kind: "HTTP", http: { url: "https://example.com" }, resources: { cpu: 1 } })).toThrow(/leave resources out/);
  });

  it("refuses an unknown kind with the list of kinds", () => {
    expect(() => validateSpec({ kind: "DOCKER" as never })).toThrow('spec.kind: "DOCKER" is not a job kind; allowed: COMMAND, SCRIPT, BINARY, HTTP');
  });

  it("refuses a SCRIPT's shape before looking its artifact up", async () => {
    const lookup = { forJob: () => Promise.reject(new Error("must not be called")) };
    const caller = { userId: "u", username: "u", role: "USER" as const };
    await expect(specArtifact(caller, { kind: "SCRIPT", interpreter: "sh", source: "x", artifactId: "0123456789abcdef01234567" }, lookup)).rejects.toThrow(/exactly one of source/);
    await expect(specArtifact(caller, { kind: "BINARY", artifactId: "../../etc" }, lookup)).rejects.toThrow(/is not an artifact id/);
    await expect(specArtifact(caller, { kind: "BINARY", artifactId: "0123456789abcdef01234567" }, null)).rejects.toThrow(/no artifact store/);
    expect(await specArtifact(caller, { kind: "COMMAND", artifactId: "x" }, lookup)).toBeNull();
  });
});

describe("success statuses", () => {
  it("reads statuses, classes and ranges, and tells success", () => {
    const spec = validateHttp({ kind: "HTTP", http: { url: "https://e.com", successStatuses: ["2xx", "304", "400-404"] } });
    expect(spec.successStatuses).toEqual([[200, 299], [304, 304], [400, 404]]);
    expect([200, 299, 304, 404].every((s) => isSuccessStatus(spec, s))).toBe(true);
    expect([199, 300, 405, 500].some((s) => isSuccessStatus(spec, s))).toBe(false);
    expect(spec.successStatuses.map(formatStatusRange)).toEqual(["2xx", "304", "400-404"]);
    expect(() => validateHttp({ kind: "HTTP", http: { url: "https://e.com", successStatuses: ["600"] } })).toThrow(/statuses are 100–599/);
    expect(() => validateHttp({ kind: "HTTP", http: { url: "https://e.com", successStatuses: ["299-200"] } })).toThrow(/low to high/);
  });
});

describe("signatures", () => {
  it("signs t.runId.body, verifies with any listed secret, refuses old ones", () => {
    const h = signatureHeader(["new", "old"], 1_000, "run1", "body");
    expect(h).toBe(`t=1000,v1=${signatureOf("new", 1_000, "run1", "body")},v1=${signatureOf("old", 1_000, "run1", "body")}`);
    expect(verifySignature(h, "new", "run1", "body", 1_000)).toBe(true);
    expect(verifySignature(h, "old", "run1", "body", 1_100)).toBe(true);
    expect(verifySignature(h, "other", "run1", "body", 1_000)).toBe(false);
    expect(verifySignature(h, "new", "run1", "body", 1_301)).toBe(false);
    expect(verifySignature("t=1000,v1=zz", "new", "run1", "body", 1_000)).toBe(false);
  });
});

describe("ready queues", () => {
  it("puts a script in its interpreter's queue of its pool", () => {
    expect(readyQueueOf({ kind: "SCRIPT", pool: "p", script: { interpreter: "python3" } })).toBe("p:python3");
    expect(readyQueueOf({ kind: "HTTP", pool: "p" })).toBe("p");
    expect(readyQueuesFor(["a", "b"], ["sh"])).toEqual(["a", "b", "a:sh", "b:sh"]);
    expect(poolOfQueue("p:python3")).toBe("p");
    expect(poolOfQueue("p")).toBe("p");
  });
});

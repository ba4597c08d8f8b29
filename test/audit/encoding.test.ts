/**
 * The audit trail's encodings (src/core/audit/canonical.ts) and settings (src/config/audit.ts):
 * which field names are redacted, that a change keeps only what differs, that the hash covers
 * every field, and that bad settings are refused with what is allowed.
 */
import { describe, expect, it } from "vitest";
import { AuditKeyring, auditHash, auditJson, capped, changedParts, isSecretField, isSecretParam, payloadDigest, redactUrl, REDACTED, urlDigest, valueDigest } from "../../src/core/audit/index.js";
import { loadConfig } from "../../src/config/index.js";
import type { AuditEntryDoc } from "../../src/domain/index.js";

describe("redaction by field name", () => {
  it("redacts passwords, keys, secrets and tokens at any depth, environment names included; keeps what only points at one", () => {
    for (const name of ["password", "newPassword", "currentPassword", "secret", "previousSecret", "token", "key", "hash", "passwordHash", "DB_PASSWORD", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "STRIPE_API_KEY", "privateKey", "authorization", "Cookie", "signature", "credentials"]) {
      expect(isSecretField(name), name).toBe(true);
    }
    for (const name of ["apiKeyId", "tokenVersion", "expiresAt", "prefix", "name", "idempotencyKey", "keyName", "username", "id", "sha256", "scope"]) {
      expect(isSecretField(name), name).toBe(false);
    }
    const plain = auditJson({
      username: "alice",
      password: "p1",
      input: { spec: { env: { DB_PASSWORD: "p2", PLAIN: "v" } }, tasks: [{ env: { API_TOKEN: "p3" } }] },
      apiKey: { id: "k1", prefix: "kairos_ab", key: "p4" },
      nothing: null,
      when: new Date(Date.UTC(2026, 0, 1)),
    });
    expect(plain).toEqual({
      apiKey: { id: "k1", key: REDACTED, prefix: "kairos_ab" },
      // An environment value not named like a secret is kept as its digest (it was kept as given).
      input: { spec: { env: { DB_PASSWORD: REDACTED, PLAIN: valueDigest("v") } }, tasks: [{ env: { API_TOKEN: REDACTED } }] },
      nothing: null,
      password: REDACTED,
      username: "alice",
      when: "2026-01-01T00:00:00.000Z",
    });
    expect(JSON.stringify(plain)).not.toMatch(/p[1-4]"/);
  });

  it("redacts a URL's password and its secret-named query parameters, in any field; leaves other text alone", () => {
    expect(redactUrl("https://bot:hunter2@hooks.example.com/a?token=t0k3n&x=1&sig=abc")).toBe("https://bot:redacted@hooks.example.com/a?token=redacted&x=1&sig=redacted");
    expect(redactUrl("https://hooks.example.com/a?x=1")).toBe("https://hooks.example.com/a?x=1");
    expect(redactUrl("not a url: token=abc")).toBe("not a url: token=abc");
    expect(redactUrl("postgres://app:pg-Secret-1@db:5432/app")).toBe("postgres://app:redacted@db:5432/app");
    expect(redactUrl("amqp://guest@mq/")).toBe("amqp://guest@mq/");
    expect(JSON.stringify(auditJson({ env: { DATABASE_URL: "mongodb://kairos:mg-Secret-2@mongo:27017/kairos" } }))).not.toContain("mg-Secret-2");
    expect(JSON.stringify(auditJson({ webhook: { url: "https://h.example.com/?api_key=k3y" } }))).not.toContain("k3y");
    expect(redactUrl("https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIA1&X-Amz-Signature=f00&x=1")).toBe("https://b.s3.amazonaws.com/o?X-Amz-Credential=redacted&X-Amz-Signature=redacted&x=1");
    expect(redactUrl("redis://cache:6379/0?password=r3d1s&db=0")).toBe("redis://cache:6379/0?password=redacted&db=0");
    for (const name of ["access_key", "X-Amz-Credential", "X-Amz-Signature", "sig", "signature", "token", "key", "apikey", "api_key", "auth", "password", "secret", "session", "code"]) expect(isSecretParam(name), name).toBe(true);
    for (const name of ["page", "limit", "x", "format"]) expect(isSecretParam(name), name).toBe(false);
  });

  it("keeps a user's payloads as digests: HTTP URLs, headers and bodies, webhook URLs, DAG params, environment values", () => {
    const slack = "https://hooks.slack.com/services/T000/B000/XyzSecret";
    expect(urlDigest(slack)).toBe(`https://hooks.slack.com/… ${valueDigest("/services/T000/B000/XyzSecret")}`);
    const body = '{"password":"b0dy"}';
    const plain = auditJson({
      spec: { http: { url: "https://u:pw@api.example.com/a?x=1", headers: { "Content-Type": "application/json", "X-Session": "s3ss", Accept: "*/*" }, body }, env: { CONFIG: "c0nf1g", DB_PASSWORD: "pw" } },
      webhook: { url: slack, slack: true },
      params: { conn: "p4r4m" },
      httpResponse: { status: 200, headers: { "set-cookie": "c", "x-token-ish": "t", "content-type": "text/plain" }, body: "r3sp" },
    });
    expect(plain).toEqual({
      httpResponse: { body: payloadDigest("r3sp"), headers: { "content-type": "text/plain", "set-cookie": REDACTED, "x-token-ish": REDACTED }, status: 200 },
      params: payloadDigest('{"conn":"p4r4m"}'),
      spec: {
        env: { CONFIG: valueDigest("c0nf1g"), DB_PASSWORD: REDACTED },
        http: { body: { chars: body.length, sha256: payloadDigest(body).sha256 }, headers: { Accept: "*/*", "Content-Type": "application/json", "X-Session": REDACTED }, url: `https://api.example.com/… ${valueDigest("/a?x=1")}` },
      },
      webhook: { slack: true, url: urlDigest(slack) },
    });
    for (const s of ["XyzSecret", "b0dy", "s3ss", "c0nf1g", "p4r4m", "r3sp", ":pw@"]) expect(JSON.stringify(plain), s).not.toContain(s);
    // A changed URL is a changed digest: the change shows in before and after.
    expect(urlDigest("https://hooks.slack.com/services/T000/B000/Other")).not.toBe(urlDigest(slack));
  });

  it("sorts keys, drops functions and undefined, bounds depth, and caps long text with its size and SHA-256", () => {
    expect(JSON.stringify(auditJson({ b: 1, a: undefined, c: () => 1, d: NaN, e: 10n }))).toBe('{"b":1,"d":null,"e":"10"}');
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 40; i++) deep = deep.x = {} as Record<string, unknown>;
    expect(JSON.stringify(auditJson(root))).toContain("[too deep]");
    const long = capped("x".repeat(20_000));
    expect(JSON.parse(long)).toEqual({ truncated: true, chars: 20_002, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(capped({ a: 1 })).toBe('{"a":1}');
  });
});

describe("before/after", () => {
  it("keeps only the fields that differ, nested objects compared field by field, arrays whole", () => {
    const [b, a] = changedParts(
      { id: "j", name: "n", paused: false, schedule: { cron: "0 * * * *", timezone: "UTC" }, tags: ["a"], description: null },
      { id: "j", name: "n", paused: true, schedule: { cron: "*/5 * * * *", timezone: "UTC" }, tags: ["a", "b"], description: "d" },
    );
    expect(b).toEqual({ description: null, paused: false, schedule: { cron: "0 * * * *" }, tags: ["a"] });
    expect(a).toEqual({ description: "d", paused: true, schedule: { cron: "*/5 * * * *" }, tags: ["a", "b"] });
    expect(changedParts({ x: 1 }, { x: 1 })).toEqual([{}, {}]);
  });
});

describe("the entry hash", () => {
  const e: Omit<AuditEntryDoc, "hash"> = {
    _id: "e1", seq: 1, v: 1, at: new Date(1_000), action: "createJob",
    actor: { userId: "u", username: "alice", role: "USER", apiKeyId: null },
    address: "127.0.0.1", targetIds: ["j"], outcome: "OK", error: null, args: "{}", before: null, after: "{}", prevHash: "0".repeat(64),
  };
  const variants: Array<Partial<Omit<AuditEntryDoc, "hash">>> = [
    { _id: "e2" }, { seq: 2 }, { at: new Date(1_001) }, { action: "deleteJob" }, { actor: { ...e.actor, apiKeyId: "k" } }, { actor: { ...e.actor, role: "ADMIN" } },
    { address: "10.0.0.1" }, { targetIds: ["k"] }, { outcome: "FORBIDDEN" }, { error: "no" }, { args: '{"a":1}' }, { before: "{}" }, { after: null }, { prevHash: "1".repeat(64) },
  ];

  it("changes with every field it covers", () => {
    const h = auditHash(e);
    for (const v of variants) expect(auditHash({ ...e, ...v }), JSON.stringify(v)).not.toBe(h);
    expect(auditHash({ ...e })).toBe(h);
  });

  it("keyed (v2): an HMAC under the audit key that covers the key id too; a previous key still verifies, an unknown key gives none", () => {
    const first = "k".repeat(32);
    const k1 = new AuditKeyring(first);
    const k2 = new AuditKeyring("m".repeat(32), [first]);
    const e2: Omit<AuditEntryDoc, "hash"> = { ...e, v: 2, keyId: k1.keyId };
    const h = k1.entryHash(e2)!;
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toBe(auditHash(e2));
    for (const v of variants) expect(k1.entryHash({ ...e2, ...v }), JSON.stringify(v)).not.toBe(h);
    expect(k2.keyId).not.toBe(k1.keyId);
    expect(k2.keyIds).toEqual([k2.keyId, k1.keyId]);
    expect(k2.entryHash(e2)).toBe(h);
    expect(new AuditKeyring("m".repeat(32)).entryHash(e2)).toBeNull();
    expect(k1.entryHash({ ...e2, keyId: k2.keyId })).toBeNull();
    // An unkeyed entry is hashed as before, whatever the key.
    expect(k1.entryHash(e)).toBe(auditHash(e));
  });
});

describe("settings", () => {
  it("KAIROS_AUDIT on|off (default on), KAIROS_AUDIT_RETENTION P1D–P36500D (default P365D); anything else is refused naming what is allowed", () => {
    expect(loadConfig("dev", {}).audit).toEqual({ enabled: true, retentionMs: 365 * 86_400_000, key: null, previousKeys: [] });
    expect(loadConfig("dev", { KAIROS_AUDIT: "off", KAIROS_AUDIT_RETENTION: "P30D" }).audit).toEqual({ enabled: false, retentionMs: 30 * 86_400_000, key: null, previousKeys: [] });
    expect(() => loadConfig("dev", { KAIROS_AUDIT: "maybe" })).toThrow('KAIROS_AUDIT: "maybe" is not one of on, off');
    expect(() => loadConfig("dev", { KAIROS_AUDIT_RETENTION: "PT1H" })).toThrow('KAIROS_AUDIT_RETENTION: must be from P1D to P36500D, got "PT1H"');
    expect(() => loadConfig("dev", { KAIROS_AUDIT_RETENTION: "a year" })).toThrow("KAIROS_AUDIT_RETENTION");
  });

  it("KAIROS_AUDIT_KEY (at least 32 characters; unset: the JWT secret's) and KAIROS_AUDIT_PREVIOUS_KEYS (comma-separated, each at least 32)", () => {
    const a = "a".repeat(32);
    const b = "b".repeat(40);
    expect(loadConfig("dev", { KAIROS_AUDIT_KEY: ` ${a} `, KAIROS_AUDIT_PREVIOUS_KEYS: `${b}, ${a},` }).audit).toMatchObject({ key: a, previousKeys: [b, a] });
    expect(() => loadConfig("dev", { KAIROS_AUDIT_KEY: "short" })).toThrow("KAIROS_AUDIT_KEY: must be at least 32 characters (use e.g. `openssl rand -hex 32`), got 5");
    expect(() => loadConfig("dev", { KAIROS_AUDIT_PREVIOUS_KEYS: `${a},short` })).toThrow("KAIROS_AUDIT_PREVIOUS_KEYS: key 2 is 5 characters");
  });
});

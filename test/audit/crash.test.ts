/**
 * A crash between a mutation's change and its audit entry does not lose the call (issue #31;
 * docs/audit.md, "A crash mid-call"): an API process (test/audit/fixtures/api-dies-mid-call.ts)
 * is SIGKILLed after createJob has made its job and before the entry is written. The call's intent,
 * stored before the mutation ran, is there; once it is older than the recovery bound, the next API
 * to start records the call with the outcome UNKNOWN, under the intent's id, in a chain that verifies.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import { AUDIT_INTENT_BOUND_MS } from "../../src/core/audit/index.js";
import { AUDIT_OUTCOME_UNKNOWN, type AuditEntryDoc, type AuditIntentDoc } from "../../src/domain/index.js";
import { connectMongo, type Mongo } from "../../src/store/mongo.js";
import { REPO_ROOT, waitUntil } from "../chaos/harness.js";
import { startTestApp, ADMIN, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";

const JWT_SECRET = "the-jwt-secret-of-the-crash-test-32-chars";
const DB = "kairos";
let emulator: RunningEmulator;
let mongo: Mongo;
let child: ChildProcess | null = null;
let app: TestApp | null = null;
const dataDir = mkdtempSync(join(tmpdir(), "kairos-audit-crash-"));

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  mongo = await connectMongo(emulator.uri, DB);
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await app?.dispose();
  await mongo?.close();
  await emulator?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the fixture API; resolves with its URL and a promise of the next "changed" line. */
function startDoomedApi(): Promise<{ url: string; changed: Promise<string> }> {
  const c = spawn(process.execPath, ["--import", "tsx", "test/audit/fixtures/api-dies-mid-call.ts", `${emulator.uri.replace(/\/$/, "")}/${DB}`, dataDir, JWT_SECRET], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  child = c;
  let out = "";
  let onChanged: (line: string) => void = () => {};
  const changed = new Promise<string>((r) => (onChanged = r));
  return new Promise((resolve, reject) => {
    c.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /ready (\S+)\n/.exec(out);
      if (ready) resolve({ url: ready[1]!, changed });
      const change = /(changed \S+)\n/.exec(out);
      if (change) onChanged(change[1]!);
    });
    c.once("exit", (code, sig) => reject(new Error(`the API exited (${code ?? sig}) before it was ready`)));
  });
}

describe("an API killed between a mutation's change and its audit entry", () => {
  it("leaves the call's intent, which the next API records with the outcome UNKNOWN once it is past the bound", async () => {
    const { url, changed } = await startDoomedApi();
    const token = await login(url, ADMIN.username, ADMIN.password);
    // The answer never comes: the process dies while the entry is being written.
    void gql(url, `mutation { createJob(input: {name: "made-before-the-crash", schedule: {kind: CRON, cron: "0 0 1 1 *"}, spec: {kind: COMMAND, command: "true"}}) { id } }`, {}, token).catch(() => null);
    expect(await changed).toBe("changed createJob");
    const exited = new Promise((r) => child!.once("exit", r));
    child!.kill("SIGKILL");
    await exited;

    // The change happened; no entry says so, only the intent.
    const job = await mongo.db.collection("jobs").findOne({ name: "made-before-the-crash" });
    expect(job).not.toBeNull();
    const audit = mongo.db.collection<AuditEntryDoc>("audit");
    expect(await audit.countDocuments({ action: "createJob" })).toBe(0);
    const intents = mongo.db.collection<AuditIntentDoc>("auditIntents");
    const [intent, ...more] = await intents.find({}).toArray();
    expect(more).toEqual([]);
    expect(intent).toMatchObject({ action: "createJob", actor: { username: ADMIN.username, role: "ADMIN" } });

    // The API stays down past the bound (the intent made that old), then one starts: its first recovery pass records the call.
    await intents.updateOne({ _id: intent!._id }, { $set: { at: new Date(Date.now() - AUDIT_INTENT_BOUND_MS - 60_000) } });
    app = await startTestApp({ env: { MONGO_URL: `${emulator.uri.replace(/\/$/, "")}/${DB}`, KAIROS_JWT_SECRET: JWT_SECRET } });
    const entry = await waitUntil("the recovered entry", () => audit.findOne({ action: "createJob" }), 20_000);
    expect(entry).toMatchObject({ _id: intent!._id, outcome: AUDIT_OUTCOME_UNKNOWN, actor: { username: ADMIN.username }, before: null, after: null });
    expect(entry.error).toContain("stopped before this call's outcome was recorded");
    expect(await intents.countDocuments()).toBe(0);

    // As the API shows it, and the chain (the login before the crash, the recovered call, the new login) verifies.
    const admin = await login(app.url, ADMIN.username, ADMIN.password);
    const d = await gqlOk(app.url, `query { auditLog(first: 5, filter: { outcome: "UNKNOWN" }) { edges { node { action outcome error } } } verifyAuditLog { ok checked unkeyedThrough broken { problem detail } } }`, {}, admin);
    expect(d.auditLog.edges.map((e: { node: { action: string; outcome: string } }) => [e.node.action, e.node.outcome])).toEqual([["createJob", "UNKNOWN"]]);
    expect(d.verifyAuditLog).toMatchObject({ ok: true, unkeyedThrough: 0, broken: null });
    expect(d.verifyAuditLog.checked).toBeGreaterThanOrEqual(3);
  }, 120_000);
});

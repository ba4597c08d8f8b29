/**
 * Attacks on the files a DAG task is given (KAIROS_INPUTS, KAIROS_PARAMS): they live in the slot's
 * given directory, bound read-only at /kairos and rewritten in place for each run, so a run must
 * not be able to change them, plant a link there for the executor to write through, or read the
 * previous run's (another user's) inputs and params. One slot, so consecutive runs share it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";
import { createDag, finishedDagRun, row, triggerDag } from "../dag/helpers.js";

let app: TestApp;
let mallory: string;
let victim: string;

beforeAll(async () => {
  app = await startTestApp({ env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EXECUTOR_SLOTS: "1" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  mallory = (await makeUser(app, admin, "mallory")).token;
  victim = (await makeUser(app, admin, "victim")).token;
}, 60_000);
afterAll(async () => {
  await app?.dispose();
});

describe("a DAG task's given files", () => {
  it("are read-only to the task: it can neither change them nor put a link beside them", async () => {
    const id = await createDag(app.url, mallory, "tamper", [
      {
        key: "t",
        command: [
          `cat "$KAIROS_PARAMS"; echo`,
          `if echo '{"x":1}' > "$KAIROS_PARAMS" 2>/dev/null; then echo WROTE; else echo REFUSED; fi`,
          `if ln -s /etc/passwd "$(dirname "$KAIROS_INPUTS")/evil" 2>/dev/null; then echo LINKED; else echo NOLINK; fi`,
          `if rm -f "$KAIROS_INPUTS" 2>/dev/null && [ ! -e "$KAIROS_INPUTS" ]; then echo REMOVED; else echo KEPT; fi`,
        ].join("; "),
      },
    ], { params: { p: 1 } });
    const run = await finishedDagRun(app.url, mallory, await triggerDag(app.url, mallory, id));
    const out = row(run, "t").run!.outputTail ?? "";
    expect(out).toContain(`{"p":1}`);
    expect(out).toContain("REFUSED");
    expect(out).toContain("NOLINK");
    expect(out).toContain("KEPT");
    expect(out).not.toMatch(/WROTE|LINKED|REMOVED/);
  });

  it("are empty for the next run in the slot: another user's params and inputs do not leak", async () => {
    const secret = `victim-secret-${Math.random().toString(36).slice(2)}`;
    const id = await createDag(app.url, victim, "private", [
      { key: "a", command: `printf '"${secret}-result"' > "$KAIROS_RESULT"` },
      { key: "b", command: `cat "$KAIROS_INPUTS" "$KAIROS_PARAMS"`, dependsOn: ["a"] },
    ], { params: { token: secret } });
    const dagRun = await finishedDagRun(app.url, victim, await triggerDag(app.url, victim, id));
    expect(dagRun.status).toBe("SUCCEEDED");
    expect(row(dagRun, "b").run!.outputTail).toContain(`${secret}-result`); // b was given them
    const job = await submitJob(app.url, mallory, { command: "ls -la /kairos; cat /kairos/* 2>&1; echo END" });
    const spy = await finishedRun(app.url, mallory, job);
    expect(spy.status, spy.error ?? "").toBe("SUCCEEDED");
    expect(spy.outputTail).toContain("END");
    expect(spy.outputTail).not.toContain(secret);
  });

  it("written over the last run's in place, keep nothing of longer ones: the next DAG task reads only its own", async () => {
    const secret = `victim-secret-${Math.random().toString(36).slice(2)}`;
    const id = await createDag(app.url, victim, "long", [
      { key: "a", command: `printf '"${secret}-${"x".repeat(300)}"' > "$KAIROS_RESULT"` },
      { key: "b", command: `cat "$KAIROS_INPUTS" > /dev/null`, dependsOn: ["a"] },
    ], { params: { token: secret, pad: "y".repeat(300) } });
    expect((await finishedDagRun(app.url, victim, await triggerDag(app.url, victim, id))).status).toBe("SUCCEEDED");
    const spyDag = await createDag(app.url, mallory, "short", [{ key: "s", command: `cat /kairos/*; echo; echo END` }], { params: { q: 1 } });
    const spy = await finishedDagRun(app.url, mallory, await triggerDag(app.url, mallory, spyDag));
    const out = row(spy, "s").run!.outputTail ?? "";
    expect(out).toContain("END");
    expect(out).toContain(`{"q":1}`);
    expect(out).not.toContain(secret);
    expect(out).not.toMatch(/xxx|yyy/);
  });
});


/**
 * A name shown to people cannot lie about itself: a job's, an API key's, an alert rule's and an
 * artifact's name refuse the bidirectional controls (U+202E makes "evil\u202Etxt.exe" read
 * "evilexe.txt" in the console, the command line and logs), line separators and C1 controls, with
 * one rule (domain/display-text.ts). Before, jobs and API keys refused only U+0000–U+001F.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code } from "../helpers/accounts.js";
import { gql } from "../helpers/graphql.js";

const t = useTestApp();

const CREATE_JOB = `mutation($i: CreateJobInput!) { createJob(input: $i) { id name } }`;
const CREATE_KEY = `mutation($name: String!) { createApiKey(name: $name, scope: READ_ONLY) { key } }`;

describe("names with hidden characters", () => {
  for (const [what, name] of [
    ["a right-to-left override", "evil\u202etxt.exe"],
    ["a first-strong isolate", "report\u2068x"],
    ["the Arabic letter mark", "a\u061cb"],
    ["a line separator", "two\u2028lines"],
    ["a C1 control (8-bit CSI)", "x\u009b2J"],
  ] as const) {
    it(`a job's and an API key's name with ${what} is refused, saying what is allowed`, async () => {
      const job = await gql(t.app.url, CREATE_JOB, { i: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "true" } } }, t.admin);
      expect(code(job)).toBe("BAD_USER_INPUT");
      expect(job.errors?.[0]?.message).toMatch(/name: must be 1–128 characters with no control characters \(nor bidi controls such as U\+202E\)/);
      const key = await gql(t.app.url, CREATE_KEY, { name }, t.admin);
      expect(code(key)).toBe("BAD_USER_INPUT");
      expect(key.errors?.[0]?.message).toMatch(/name: must be 1–64 characters with no control characters \(nor bidi controls such as U\+202E\)/);
    });
  }

  it("a name, command, argument or variable holding an unpaired surrogate is refused (it was stored as U+FFFD: a job named \"lone\\ud800x\" came back as \"lone\uFFFDx\", a command ran other text than given)", async () => {
    const lone = "lone\ud800x";
    const job = (name: string, spec: Record<string, unknown>) => gql(t.app.url, CREATE_JOB, { i: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec } }, t.admin);
    const problem = (at: number) => `holds an unpaired UTF-16 surrogate (\\ud800 at character ${at}), which is no character: send it as valid Unicode`;
    for (const [field, at, r] of [
      ["name", 5, await job(lone, { command: "true" })],
      ["spec.command", 10, await job("surrogate-command", { command: `echo ${lone}` })],
      ["spec.argv[1]", 5, await job("surrogate-argv", { argv: ["echo", lone] })],
      ["spec.env.X", 5, await job("surrogate-env", { command: "true", env: { X: lone } })],
      ["name", 5, await gql(t.app.url, CREATE_KEY, { name: lone }, t.admin)],
      ["name", 5, await gql(t.app.url, `mutation($name: String!) { createAlertRule(input: { name: $name, on: [RUN_FAILED], webhook: { url: "https://hooks.example.com/k" } }) { id } }`, { name: lone }, t.admin)],
    ] as const) {
      expect(code(r), field).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.message, field).toBe(`${field}: ${problem(at)}`);
    }
    // A name of spaces only says so, not that it holds control characters.
    const spaces = await job("   ", { command: "true" });
    expect(spaces.errors?.[0]?.message).toBe("name: must not be empty or only spaces: 1–128 characters");
  });

  it("names in other scripts and with emoji are still taken as they are", async () => {
    for (const name of ["nächtlicher Bericht", "ليلي", "夜間レポート", "deploy 🚀"]) {
      const job = await gql<{ createJob: { name: string } }>(t.app.url, CREATE_JOB, { i: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "true" } } }, t.admin);
      expect(job.errors).toBeUndefined();
      expect(job.data?.createJob.name).toBe(name);
    }
  });
});

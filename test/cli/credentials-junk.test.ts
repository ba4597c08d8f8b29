/**
 * The stored logins (src/cli/profiles.ts) when credentials.json holds junk, and credentials that
 * cannot be sent. Valid JSON of another shape was read as no logins (or, for null, "is not valid
 * JSON"); a profile whose server is 5 said `--server: "5" is not a URL` of a flag never given; a
 * token or an API key with a line break inside made fetch fail with a message holding the whole
 * secret; `login --password-stdin` on a terminal waited for Ctrl-D, showing the password typed.
 * In-process (runCli); nothing listens on the servers named, the problems are found first.
 */
import { mkdir, mkdtemp, rm, rmdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialsPath, writeCredentials } from "../../src/cli/profiles.js";
import { runKairos, type InProcessRun } from "./in-process.js";

let home = "";
const file = () => join(home, "kairos", "credentials.json");
/** A port fetch refuses to connect to (a "bad port"): a request that gets this far fails at once, with no network. */
const NOWHERE = "http://127.0.0.1:9";

const kairos = (argv: string[], opts: { env?: Record<string, string>; stdin?: string; terminal?: boolean } = {}): Promise<InProcessRun> =>
  runKairos(argv, { env: { XDG_CONFIG_HOME: home, ...opts.env }, stdin: opts.stdin, terminal: opts.terminal });

async function stored(content: unknown): Promise<void> {
  await writeFile(file(), typeof content === "string" ? content : JSON.stringify(content));
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "kairos-cred-junk-"));
  await mkdir(join(home, "kairos"), { recursive: true });
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe("credentials.json with junk in it", () => {
  it("valid JSON that is not a credentials file says so, with what it holds", async () => {
    for (const [content, holds] of [
      ["null", "it holds null"],
      ["[1,2]", "it holds a list"],
      ['"x"', "it holds a string"],
      ['{"profiles":"x"}', 'its "profiles" is a string'],
      ['{"profiles":[]}', 'its "profiles" is a list'],
    ] as const) {
      await stored(content);
      const r = await kairos(["get", "jobs"]);
      expect(r.code, content).toBe(2);
      expect(r.err, content).toBe(`kairos: ${file()} is not a kairos credentials file (${holds}, not {"profiles": {NAME: {server, token}}}); remove it and log in again\n`);
    }
  });

  it("a damaged profile names itself and the file, not a flag never given; another profile still works", async () => {
    await stored({ current: "default", profiles: { default: { server: 5, token: "t" }, good: { server: NOWHERE, token: "t" }, odd: { server: "javascript:alert(1)", token: "t" }, list: [] } });
    const r = await kairos(["get", "jobs"]);
    expect(r.err).toBe(`kairos: profile "default" in ${file()} has no server URL: log in again (kairos login --profile default --server URL …), or remove it (kairos logout --profile default)\n`);
    expect((await kairos(["get", "jobs", "--profile", "list"])).err).toContain(`profile "list" in ${file()} is a list, not a login`);
    expect((await kairos(["get", "jobs", "--profile", "odd"])).err).toBe(`kairos: profile "odd" (${file()}): "javascript:alert(1)" must be an http:// or https:// URL\n`);
    // The good one gets as far as the network.
    expect((await kairos(["get", "jobs", "--profile", "good"])).err).toMatch(/^kairos: cannot reach http:\/\/127\.0\.0\.1:9\/graphql/);
    // Logging out of the damaged one removes it.
    expect((await kairos(["logout", "--profile", "default"])).code).toBe(0);
    expect((await kairos(["get", "jobs", "--profile", "default"])).err).toMatch(/^kairos: no server: log in first/);
  });

  it("a server URL with a password in it is refused without showing the password (fetch's refusal printed it twice)", async () => {
    await stored({ profiles: {} });
    for (const argv of [["get", "jobs", "--server", "http://u:secretpw@127.0.0.1:9"], ["login", "--server", "http://u:secretpw@127.0.0.1:9", "--username", "a", "--password-stdin"]]) {
      const r = await kairos(argv, { env: { KAIROS_TOKEN: "t" }, stdin: "x" });
      expect(r.code).toBe(2);
      expect(r.err).toBe("kairos: --server: a server URL with a user name or password in it (http://…@127.0.0.1:9) is not used: give the URL without them, and the credential with kairos login, KAIROS_TOKEN or KAIROS_API_KEY\n");
    }
  });

  it("KAIROS_SERVER is named when it is the one that is wrong", async () => {
    await stored({ profiles: {} });
    expect((await kairos(["get", "jobs"], { env: { KAIROS_SERVER: "localhost:4000", KAIROS_TOKEN: "t" } })).err).toBe('kairos: KAIROS_SERVER: "localhost:4000" must be an http:// or https:// URL\n');
  });
});

describe("a credential that cannot be sent is refused without showing it", () => {
  const SECRET = "kairos_secretpart1\nsecretpart2";

  it("an API key piped to login with a line break inside", async () => {
    await stored({ profiles: {} });
    const r = await kairos(["login", "--server", NOWHERE, "--api-key-stdin"], { stdin: SECRET });
    expect(r.code).toBe(2);
    expect(r.err).toBe("kairos: the API key on stdin holds a line break at character 19 of 30: a token or API key is one line of letters, digits and punctuation; give it alone (it is not shown here)\n");
    expect(r.err).not.toContain("secretpart");
  });

  it("KAIROS_TOKEN, KAIROS_API_KEY and a stored token", async () => {
    const t = await kairos(["get", "jobs"], { env: { KAIROS_SERVER: NOWHERE, KAIROS_TOKEN: "tok☃en" } });
    expect(t.err).toBe("kairos: KAIROS_TOKEN holds a character outside ASCII (U+2603) at character 4 of 6: a token or API key is one line of letters, digits and punctuation; give it alone (it is not shown here)\n");
    const k = await kairos(["get", "jobs"], { env: { KAIROS_SERVER: NOWHERE, KAIROS_API_KEY: SECRET } });
    expect(k.err).toMatch(/^kairos: KAIROS_API_KEY holds a line break at character 19 of 30/);
    expect(k.err).not.toContain("secretpart");
    await stored({ current: "default", profiles: { default: { server: NOWHERE, token: "abc\tdef" } } });
    const s = await kairos(["get", "jobs"]);
    expect(s.err).toBe(`kairos: the token of profile "default" (${file()}) holds a tab at character 4 of 7: a token or API key is one line of letters, digits and punctuation; give it alone (it is not shown here)\n`);
    // Spaces and a line end around one are dropped, as a header's are: the request goes out.
    expect((await kairos(["get", "jobs"], { env: { KAIROS_SERVER: NOWHERE, KAIROS_TOKEN: " abc\r\n" } })).err).toMatch(/^kairos: cannot reach /);
  });
});

describe("kairos login --password-stdin on a terminal", () => {
  it("is refused at once, saying how to pipe the secret: it waited for Ctrl-D with the password shown as it was typed", async () => {
    const p = await kairos(["login", "--server", NOWHERE, "--username", "alice", "--password-stdin"], { terminal: true });
    expect(p.code).toBe(2);
    expect(p.err).toBe(
      `kairos: --password-stdin reads the password from a pipe, and stdin is this terminal (what is typed would show): printf '%s' "$PASSWORD" | kairos login --server ${NOWHERE} --username alice --password-stdin (read -rs PASSWORD first reads it without showing it)\n`,
    );
    const k = await kairos(["login", "--server", NOWHERE, "--api-key-stdin"], { terminal: true });
    expect(k.err).toMatch(/^kairos: --api-key-stdin reads the API key from a pipe, and stdin is this terminal/);
  });
});

describe("a credentials file that cannot be read or written", () => {
  const ELSEWHERE = "; set XDG_CONFIG_HOME to a directory of yours, or give KAIROS_SERVER with KAIROS_TOKEN or KAIROS_API_KEY instead of a stored login";

  it("says why, and what to do instead, without a stack", async () => {
    // XDG_CONFIG_HOME under a file, and credentials.json a folder.
    await writeFile(join(home, "a-file"), "");
    const under = await kairos(["get", "jobs"], { env: { XDG_CONFIG_HOME: join(home, "a-file") } });
    expect(under.code).toBe(2);
    expect(under.err).toBe(`kairos: cannot read the stored logins in ${join(home, "a-file", "kairos", "credentials.json")}: no such file or directory (a part of the path is a file)${ELSEWHERE}\n`);
    await rm(file(), { force: true });
    await mkdir(file());
    try {
      expect((await kairos(["whoami"])).err).toBe(`kairos: cannot read the stored logins in ${file()}: a folder where a file was expected${ELSEWHERE}\n`);
    } finally {
      await rmdir(file());
    }
  });

  it("a login that cannot be kept says why", async () => {
    const env = { XDG_CONFIG_HOME: home };
    // The file is written beside itself first, then renamed: a folder in that place stops it.
    const tmp = `${credentialsPath(env)}.${process.pid}.tmp`;
    await mkdir(tmp);
    try {
      await expect(writeCredentials(env, { profiles: {} })).rejects.toThrow(`cannot keep the login in ${credentialsPath(env)}: a folder where a file was expected${ELSEWHERE}`);
    } finally {
      await rmdir(tmp);
    }
  });
});

/**
 * Connecting the command line as a stranger does: the global options where a stranger puts them,
 * https:// to a server that speaks plain http and the reverse, and a login that fails.
 * Each test is the reproduction of one defect; the built `bin/kairos.js` runs as a subprocess
 * against the product in-process, with a private config dir for its stored logins.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gqlOk } from "../helpers/graphql.js";
import { makeJob, makeUser, PASSWORD } from "../helpers/accounts.js";
import { makeTlsFiles, type TlsFiles } from "../helpers/redis-tls.js";
import { useCliFixture } from "./fixture.js";
import { tlsFront, type TlsFront } from "./tls-front.js";

const t = useCliFixture();

let tls: TlsFiles;
const fronts: TlsFront[] = [];
beforeAll(async () => {
  tls = await makeTlsFiles();
}, 60_000);
afterAll(async () => {
  await Promise.all(fronts.map((f) => f.close()));
  tls?.remove();
});

describe("kairos connecting as a stranger does", { timeout: 300_000 }, () => {
  it("--profile and --server work before the command as after it (before it, it was `unknown command \"--profile\"`)", async () => {
    const { token } = await makeUser(t.app, t.admin, "stranger-before");
    await makeJob(t.app, token, "before-job");
    const login = await t.kairos(["--profile", "early", "--server", t.app.url, "login", "--username", "stranger-before", "--password-stdin"], { input: PASSWORD });
    expect(login.code, login.err).toBe(0);
    expect(login.out).toContain('profile "early"');
    // Another profile is the current one, so only an honoured --profile finds the job.
    const other = await t.kairos(["login", "--server", t.app.url, "--username", "admin", "--password-stdin", "--profile", "other"], { input: "admin-password-for-tests" });
    expect(other.code, other.err).toBe(0);
    for (const args of [
      ["--profile", "early", "get", "jobs", "-o", "json"],
      ["--profile=early", "get", "jobs", "-o", "json"],
      ["get", "jobs", "-o", "json", "--profile", "early"],
      ["--server", t.app.url, "--profile", "early", "get", "jobs", "-o", "json"],
    ]) {
      const r = await t.kairos(args);
      expect(r.code, `kairos ${args.join(" ")}: ${r.err}`).toBe(0);
      expect((JSON.parse(r.out) as Array<{ name: string }>).map((j) => j.name), `kairos ${args.join(" ")}`).toEqual(["before-job"]);
    }
    // Between a command and its subcommand too.
    const dag = await t.kairos(["dag", "--profile", "early", "describe", "no-such-dag"]);
    expect(dag.err).toContain('DAG "no-such-dag" not found');
    const who = await t.kairos(["--profile", "early", "whoami"]);
    expect(who.out).toContain('stranger-before (user');
    const out = await t.kairos(["--profile", "early", "logout"]);
    expect(out.out).toContain('Logged out (profile "early"');

    // Where it cannot go, the error says where it does.
    const role = await t.kairos(["--profile", "early", "dev"]);
    expect(role.code).toBe(2);
    expect(role.err).toContain('--profile belongs to the command line\'s commands (login, logout, whoami, apply, get');
    expect(role.err).toContain('not to the role "dev"');
    const bare = await t.kairos(["--profile"]);
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("--profile needs a value and then a command, e.g. kairos --profile NAME get jobs");
    const port = await t.kairos(["--port", "4999", "dev"]);
    expect(port.code).toBe(2);
    expect(port.err).toContain('"--port" is an option, not a command: options go after the command (kairos dev --port 4999)');
  });

  it("a profile named __proto__ is stored (login said so and stored nothing), constructor is no stored profile (`--server: \"undefined\" is not a URL`), and an empty --profile is refused (it was the default one)", async () => {
    await makeUser(t.app, t.admin, "stranger-proto");
    const login = await t.kairos(["login", "--server", t.app.url, "--username", "stranger-proto", "--password-stdin", "--profile", "__proto__"], { input: PASSWORD });
    expect(login.code, login.err).toBe(0);
    for (const args of [["--profile", "__proto__", "whoami"], ["whoami"]]) {
      const who = await t.kairos(args);
      expect(who.code, `kairos ${args.join(" ")}: ${who.err}`).toBe(0);
      expect(who.out).toContain('stranger-proto (user');
    }
    const ctor = await t.kairos(["--profile", "constructor", "get", "jobs", "--server", t.app.url]);
    expect(ctor.code).toBe(2);
    expect(ctor.err).not.toContain("undefined");
    expect(ctor.err).toContain("log in first");
    const empty = await t.kairos(["get", "jobs", "--profile", ""]);
    expect(empty.code).toBe(2);
    expect(empty.err.trim()).toBe("kairos: --profile: an empty name is none: 1–64 characters without spaces, e.g. --profile prod");
    await t.kairos(["logout", "--profile", "__proto__"]);
  });

  it("https:// to a server that speaks plain http, and http:// to one that speaks https, say so and which to use (it printed OpenSSL's `wrong version number` or `other side closed`)", async () => {
    const api = new URL(t.app.url);
    const plain = `http://${api.host}`;
    const asHttps = `https://${api.host}`;
    const withToken = (server: string, env: Record<string, string> = {}) => ({ env: { KAIROS_SERVER: server, KAIROS_TOKEN: t.admin, ...env } });

    const wrongTls = await t.kairos(["get", "jobs"], withToken(asHttps));
    expect(wrongTls.code).toBe(2);
    expect(wrongTls.err).not.toMatch(/ssl3|wrong version number|EPROTO|ECONNRESET/i);
    expect(wrongTls.err).toContain(`kairos: ${asHttps}/graphql: the server at ${api.host} speaks plain http, not https: use ${plain} (in --server, KAIROS_SERVER, or log in again with it)`);
    const login = await t.kairos(["login", "--server", asHttps, "--username", "admin", "--password-stdin", "--profile", "tls"], { input: "admin-password-for-tests" });
    expect(login.err).toContain(`speaks plain http, not https: use ${plain}`);
    // Following a log opens a WebSocket, not a fetch: it retried 30 times over a minute and more, then said `connection closed (1006)`.
    const follow = await t.kairos(["logs", "0123456789abcdef01234567", "-f"], withToken(asHttps));
    expect(follow.code).toBe(2);
    expect(follow.err).not.toContain("1006");
    expect(follow.err.trim()).toBe(`kairos: ${asHttps}/graphql: the server at ${api.host} speaks plain http, not https: use ${plain} (in --server, KAIROS_SERVER, or log in again with it)`);

    // The reverse, behind a TLS front that hangs up on plain http (as Node's https does), and one that answers 400 (as nginx does).
    for (const mode of ["hang-up", "nginx-400"] as const) {
      const front = await tlsFront(api, tls, mode);
      fronts.push(front);
      const port = new URL(front.url).host;
      const r = await t.kairos(["get", "jobs"], withToken(`http://${port}`));
      expect(r.code, mode).toBe(2);
      expect(r.err, mode).not.toMatch(/other side closed|HTTP 400/);
      expect(r.err, mode).toContain(`kairos: http://${port}/graphql: the server at ${port} speaks https, not plain http: use https://${port} (in --server, KAIROS_SERVER, or log in again with it)`);
      const follow = await t.kairos(["logs", "0123456789abcdef01234567", "-f"], withToken(`http://${port}`));
      expect(follow.code, mode).toBe(2);
      expect(follow.err, mode).toContain(`speaks https, not plain http: use https://${port}`);
      // At https://, with a certificate this machine does not trust: says how to trust it; and given the CA, it works.
      const untrusted = await t.kairos(["get", "jobs"], withToken(front.url));
      expect(untrusted.code, mode).toBe(2);
      expect(untrusted.err, mode).toContain(`cannot reach ${front.url}/graphql: its TLS certificate is not trusted`);
      expect(untrusted.err, mode).toContain("give the CA that signed it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem");
      const trusted = await t.kairos(["whoami"], withToken(front.url, { NODE_EXTRA_CA_CERTS: tls.ca }));
      expect(trusted.code, `${mode}: ${trusted.err}`).toBe(0);
      expect(trusted.out).toContain(`admin (admin, id`);
    }
  });

  it("a failed login says what went wrong and what to do (it said `invalid username or password (log in with \`kairos login\` …)` to someone who just did)", async () => {
    const login = (username: string, password: string, server = t.app.url) => t.kairos(["login", "--server", server, "--username", username, "--password-stdin", "--profile", "failing"], { input: password });
    const refused = (username: string) => `kairos: login to ${t.app.url} as "${username}" refused`;
    await makeUser(t.app, t.admin, "stranger-typo");
    for (const [username, password] of [["stranger-typo", "not-the-password"], ["stranger-nobody", PASSWORD]]) {
      const r = await login(username!, password!);
      expect(r.code, r.err).toBe(2);
      expect(r.err).not.toContain("log in with `kairos login`");
      expect(r.err).toContain(`${refused(username!)}: the user name or the password is wrong (the server does not say which). Check --username, and pipe only the password: printf '%s' "$PASSWORD" | kairos login`);
    }
    const { id } = await makeUser(t.app, t.admin, "stranger-disabled");
    await gqlOk(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id }, t.admin);
    const disabled = await login("stranger-disabled", PASSWORD);
    expect(disabled.code).toBe(2);
    expect(disabled.err.trim()).toBe(`${refused("stranger-disabled")}: the account is disabled; ask an administrator to enable it`);

    // Nothing listens there.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const nobody = await login("admin", "whatever", `http://127.0.0.1:${port}`);
    expect(nobody.code).toBe(2);
    expect(nobody.err).toContain(`kairos: cannot reach http://127.0.0.1:${port}/graphql: nothing listens on 127.0.0.1:${port} (connection refused); check the host and the port, and that the server is running`);
    // A port fetch refuses whatever listens there: it said `cannot reach …: bad port`.
    const bad = await login("admin", "whatever", "http://127.0.0.1:6000");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("kairos: cannot reach http://127.0.0.1:6000/graphql: port 6000 is one that Node's fetch (as every browser) refuses to connect to, whatever listens there");
    expect(bad.err).toContain("run the server on another port, such as 4000");

    // An API key that is not one.
    for (const key of ["kairos_not-a-real-key", "hunter2"]) {
      const r = await t.kairos(["login", "--server", t.app.url, "--api-key-stdin", "--profile", "failing"], { input: key });
      expect(r.code).toBe(2);
      expect(r.err).not.toContain("log in with `kairos login`");
      expect(r.err).toContain(`kairos: the API key was refused by ${t.app.url}: invalid`);
      expect(r.err).toContain("Pipe the whole key alone");
      if (key === "hunter2") expect(r.err).toContain("(what was piped in does not start with kairos_, as API keys do)");
    }
    // Nothing was stored by any of them.
    const who = await t.kairos(["whoami", "--profile", "failing"]);
    expect(who.err).toContain('profile "failing" has no login');
  });
});

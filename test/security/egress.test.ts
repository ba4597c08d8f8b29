/**
 * EGRESS network access (issue #11): a job that asks for it reaches the outside world, and never
 * the executor's host (any of its addresses), the other slots, or a denied range; a job that does
 * not ask has no network at all.
 *
 * "The outside world" is a network namespace this test makes: a TCP server behind a veth pair on
 * the host, at an address of the test's own. No traffic leaves the machine.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";

const r = 100 + Math.floor(Math.random() * 100);
const WORLD_NS = `kairos-test-world-${r}`;
const WORLD_HOST_IF = `kxtw${r}h`;
const WORLD = `10.232.${r}.2`; // the world's server
const DENIED = `169.254.${r}.2`; // the same server, on an address in a denied range
const SUBNET = `10.${200 + (r % 50)}.0.0/16`;
const PORT = 7777;

let app: TestApp;
let user: string;
let world: ChildProcess;
let canary: Server;
let canaryPort = 0;
let canaryHits = 0;

const sh = (cmd: string[]) => execFileSync(cmd[0]!, cmd.slice(1), { stdio: ["ignore", "ignore", "pipe"] });

beforeAll(async () => {
  sh(["ip", "netns", "add", WORLD_NS]);
  sh(["ip", "link", "add", WORLD_HOST_IF, "type", "veth", "peer", "name", "eth0", "netns", WORLD_NS]);
  sh(["ip", "addr", "add", `10.232.${r}.1/30`, "dev", WORLD_HOST_IF]);
  sh(["ip", "link", "set", WORLD_HOST_IF, "up"]);
  sh(["ip", "route", "add", `169.254.${r}.0/24`, "dev", WORLD_HOST_IF]);
  sh(["ip", "-n", WORLD_NS, "addr", "add", `${WORLD}/30`, "dev", "eth0"]);
  sh(["ip", "-n", WORLD_NS, "addr", "add", `${DENIED}/24`, "dev", "eth0"]);
  sh(["ip", "-n", WORLD_NS, "link", "set", "eth0", "up"]);
  sh(["ip", "-n", WORLD_NS, "route", "add", "default", "via", `10.232.${r}.1`]);
  world = spawn("ip", ["netns", "exec", WORLD_NS, process.execPath, "-e", `require("net").createServer((s) => s.end("hello-from-world\\n")).listen(${PORT}, "0.0.0.0")`], { stdio: "ignore" });
  canary = createServer((s) => {
    canaryHits++;
    s.destroy();
  });
  await new Promise<void>((res) => canary.listen(0, "0.0.0.0", res));
  canaryPort = (canary.address() as { port: number }).port;
  app = await startTestApp({
    env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EGRESS_SUBNET: SUBNET, KAIROS_EGRESS_DENY: "127.0.0.0/8,169.254.0.0/16" },
  });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  user = (await makeUser(app, admin, "netuser")).token;
}, 60_000);

afterAll(async () => {
  await app?.dispose();
  world?.kill("SIGKILL");
  canary?.close();
  try {
    sh(["ip", "netns", "del", WORLD_NS]);
  } catch {
    // already gone
  }
});

const FINAL = new Set(["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD"]);
async function run(command: string, network?: "EGRESS" | "NONE"): Promise<{ status: string; outputTail: string | null }> {
  const job = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `n-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command, timeout: "PT20S", ...(network ? { network } : {}) } } },
    user,
  );
  for (const end = Date.now() + 30_000; Date.now() < end; ) {
    const d = await gqlOk<{ runs: { edges: Array<{ node: { status: string; outputTail: string | null } }> } }>(
      app.url,
      `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { status outputTail } } } }`,
      { id: job.createJob.id },
      user,
    );
    const node = d.runs.edges[0]?.node;
    if (node && FINAL.has(node.status)) return node;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("run did not finish");
}

const connect = (addr: string, port: number) => `(timeout 3 bash -c 'exec 3<>/dev/tcp/${addr}/${port}; head -1 <&3' && echo CONNECTED-${addr}-${port} || echo refused-${addr}-${port})`;
/** The slot's gateway (the host's end of its veth), read from the kernel's routing table. */
const GATEWAY = `h=$(awk '$2=="00000000"{print $3}' /proc/net/route); gw=$(printf "%d.%d.%d.%d" 0x$(echo $h | cut -c7-8) 0x$(echo $h | cut -c5-6) 0x$(echo $h | cut -c3-4) 0x$(echo $h | cut -c1-2))`;

describe.runIf(process.platform === "linux" && process.getuid?.() === 0)("EGRESS network access", () => {
  it("is offered by the node and shown in its isolation", async () => {
    const d = await gqlOk<{ nodes: { edges: Array<{ node: { isolation: { network: string[]; enforced: string[] } } }> } }>(app.url, `{ nodes { edges { node { isolation { network enforced } } } } }`, {}, user);
    expect(d.nodes.edges[0]!.node.isolation.network).toEqual(["NONE", "EGRESS"]);
  });

  it("reaches the outside world", async () => {
    const out = await run(connect(WORLD, PORT), "EGRESS");
    expect(out.outputTail).toContain("hello-from-world");
    expect(out.outputTail).toContain(`CONNECTED-${WORLD}-${PORT}`);
  });

  it("never reaches the host itself, on loopback or through its gateway, nor a denied range", async () => {
    const apiPort = Number(new URL(app.url).port);
    const mongoPort = Number(new URL(app.mongoUrl).port);
    const out = await run(
      [GATEWAY, connect("127.0.0.1", canaryPort), `${connect("$gw", canaryPort)}`, `${connect("$gw", apiPort)}`, `${connect("$gw", mongoPort)}`, connect(DENIED, PORT), "echo gw=$gw"].join("; "),
      "EGRESS",
    );
    expect(out.outputTail, out.outputTail ?? "").toMatch(/gw=10\.\d+\.\d+\.1$/m);
    expect(out.outputTail).not.toMatch(/CONNECTED/);
    expect(out.outputTail).not.toContain("hello-from-world");
    expect(canaryHits).toBe(0);
  });

  it("is not given to a job that does not ask for it", async () => {
    const out = await run(connect(WORLD, PORT));
    expect(out.outputTail).toContain(`refused-${WORLD}-${PORT}`);
    expect(out.outputTail).not.toContain("hello-from-world");
  });

  it("is refused at submission for a pool whose nodes do not offer it", async () => {
    const res = await gql(
      app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "no-egress-pool", schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "true", network: "EGRESS", pool: "default" } } },
      user,
    );
    expect(res.errors).toBeUndefined(); // this node offers it
    const d = await gqlOk<{ nodes: { edges: Array<{ node: { isolation: { notes: string[] } } }> } }>(app.url, `{ nodes { edges { node { isolation { notes } } } } }`, {}, user);
    expect(d.nodes.edges[0]!.node.isolation.notes.join(" ")).not.toMatch(/EGRESS network access is not offered/);
  });
});

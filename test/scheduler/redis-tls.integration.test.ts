/**
 * Redis over TLS with real certificates (a CA, server and client certificates made by openssl in a
 * temp dir; test/helpers/redis-tls.ts): every server requires a client certificate (mutual TLS).
 * - one server (`rediss://`): the CA that signed it connects, another CA is refused with an error
 *   that says why and which settings to check, and so is a client without a certificate;
 * - a Sentinel group whose servers, replication and sentinels all speak TLS: the whole product
 *   (API, scheduler, executor) started with REDIS_SENTINELS (the sentinels' TLS ports),
 *   REDIS_TLS=1 and the CA, certificate and key files fires a job, and its connections to the
 *   primary are on the primary's TLS port;
 * - a Cluster (3 + 3) whose client ports, bus and replication speak TLS: a connection with the CA
 *   writes keys over every primary and reads the three primary terms; another CA is refused.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { JobDoc, RunDoc } from "../../src/domain/documents.js";
import type { Cluster } from "ioredis";
import { openRedis, quitRedis } from "../../src/shared-state/index.js";
import { primaryTerms } from "../../src/shared-state/redis/primaries.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";
import { makeTlsFiles, startTlsCluster, startTlsSentinelGroup, startTlsServer, type TlsCluster, type TlsFiles, type TlsSentinelGroup, type TlsServer } from "../helpers/redis-tls.js";
import { withNode } from "../helpers/redis-servers.js";

const caller: Principal = { userId: "000000000000000000000134", username: "tls", role: "ADMIN" };
const quiet = () => {};

let files: TlsFiles;
let one: TlsServer;
let group: TlsSentinelGroup;
let app: TestApp | undefined;
let cluster: TlsCluster | undefined;

beforeAll(async () => {
  files = await makeTlsFiles();
  one = await startTlsServer(files);
  group = await startTlsSentinelGroup(files);
}, 90_000);

afterAll(async () => {
  try {
    await Promise.race([app?.dispose(), new Promise((resolve) => setTimeout(resolve, 20_000))]);
  } finally {
    await one?.stop();
    await group?.stop();
    await cluster?.stop();
    files?.remove();
  }
}, 60_000);

const pem = (path: string) => readFileSync(path, "utf8");

describe("Redis over TLS", () => {
  it("one server: its CA connects; another CA, or no client certificate, is refused with a clear error", async () => {
    const url = `rediss://127.0.0.1:${one.tlsPort}`;
    const client = { cert: pem(files.clientCert), key: pem(files.clientKey) };
    const good = await openRedis({ kind: "single", url, tls: { ca: pem(files.ca), ...client } }, "tls-good", quiet);
    expect(await good.ping()).toBe("PONG");
    await quitRedis(good);

    const wrongCa = openRedis({ kind: "single", url, tls: { ca: pem(files.otherCa), ...client } }, "tls-wrong-ca", quiet);
    await expect(wrongCa).rejects.toThrow(/cannot connect to redis 127\.0\.0\.1:\d+ \(TLS\): self-signed certificate in certificate chain.*REDIS_TLS_CA_FILE/s);

    const noCert = openRedis({ kind: "single", url, tls: { ca: pem(files.ca) } }, "tls-no-cert", quiet);
    // The server's refusal arrives as a TLS alert ("certificate required") or, racing it, as a reset.
    await expect(noCert).rejects.toThrow(/cannot connect to redis 127\.0\.0\.1:\d+ \(TLS\): .*(certificate required|ECONNRESET).*REDIS_TLS_CERT_FILE/s);
  }, 30_000);

  it("the product behind a Sentinel group over TLS fires a job, connected on the primary's TLS port", async () => {
    app = await startTestApp({
      env: {
        REDIS_SENTINELS: group.env,
        REDIS_SENTINEL_NAME: group.name,
        REDIS_TLS: "1",
        REDIS_TLS_CA_FILE: files.ca,
        REDIS_TLS_CERT_FILE: files.clientCert,
        REDIS_TLS_KEY_FILE: files.clientKey,
        KAIROS_REDIS_PREFIX: `t-tls-${Math.random().toString(36).slice(2)}`,
        KAIROS_SANDBOX: "none",
      },
    });
    const job: JobDoc = await app.services.jobs.create(caller, { name: "over-tls", spec: { kind: "COMMAND", command: "true" }, schedule: { kind: "ONCE", at: Date.now() + 500 } } as Parameters<TestApp["services"]["jobs"]["create"]>[1]);
    const runs = await waitFor(async () => {
      const found: RunDoc[] = await app!.services.mongo.c.runs.find({ jobId: job._id }).toArray();
      return found.length === 1 && found[0]!.status === "SUCCEEDED" ? found : null;
    }, 45_000, 100);
    expect(runs).toHaveLength(1);
    const primary = group.servers[0]!;
    const clients = String(await withNode(primary.port, (r) => r.call("CLIENT", "LIST")));
    const kairos = clients.split("\n").filter((l) => / name=kairos-cmd /.test(l));
    expect(kairos.length).toBeGreaterThan(0);
    for (const line of kairos) expect(line).toContain(`laddr=127.0.0.1:${primary.tlsPort} `);
  }, 90_000);

  it("a Cluster over TLS: its CA connects to every primary; another CA is refused with a clear error", async () => {
    cluster = await startTlsCluster(files);
    const seed = [{ host: "127.0.0.1", port: cluster.nodes[0]!.tlsPort }];
    const tls = { ca: pem(files.ca), cert: pem(files.clientCert), key: pem(files.clientKey) };
    const good = (await openRedis({ kind: "cluster", nodes: seed, tls }, "tls-cluster", quiet)) as Cluster;
    for (let i = 0; i < 30; i++) await good.set(`t{${i}}`, String(i));
    const tlsPorts = new Set(cluster.nodes.map((n) => n.tlsPort));
    const primaries = good.nodes("master").map((n) => n.options.port!);
    expect(primaries).toHaveLength(3);
    for (const port of primaries) expect(tlsPorts.has(port), `primary on port ${port}`).toBe(true);
    expect(await primaryTerms(good)).toHaveLength(3);
    await quitRedis(good);

    const wrongCa = openRedis({ kind: "cluster", nodes: seed, tls: { ...tls, ca: pem(files.otherCa) } }, "tls-cluster-wrong-ca", quiet);
    await expect(wrongCa).rejects.toThrow(/cannot connect to redis cluster 127\.0\.0\.1:\d+ \(TLS\): .*REDIS_TLS_CA_FILE/s);
  }, 90_000);
});

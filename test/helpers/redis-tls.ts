/**
 * Redis over TLS for tests: a throw-away CA, a server certificate for 127.0.0.1 and localhost and a
 * client certificate, all made with `openssl` in a temp dir, and redis-servers (one, a Sentinel
 * group: 1 primary, 1 replica, 3 sentinels, or a Cluster of 3 primaries + 3 replicas) that listen on a TLS port and require client
 * certificates there (mutual TLS), replicate and monitor over TLS too. Each also keeps a plain port
 * on loopback, for the tests' own admin commands (`withNode`); Kairos is given only the TLS ports.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../support/local-redis.js";
import { SENTINEL_NAME } from "./redis-sentinel.js";
import { run, spawnServer, waitUntil, withNode, infoField, type ServerProcess } from "./redis-servers.js";

export interface TlsFiles {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Another CA, which signed none of these: a client trusting it must refuse the servers. */
  otherCa: string;
  remove(): void;
}

const SUBJECT_ALT = "subjectAltName=IP:127.0.0.1,DNS:localhost";

async function openssl(dir: string, args: string[]): Promise<void> {
  await run("openssl", args, { cwd: dir, timeout: 30_000 });
}

/** A CA, a server and a client certificate signed by it (EC P-256, one day), and an unrelated CA. */
export async function makeTlsFiles(): Promise<TlsFiles> {
  const dir = mkdtempSync(join(tmpdir(), "kairos-tls-"));
  const key = (name: string) => ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${name}.key`];
  await openssl(dir, ["req", "-x509", ...key("ca"), "-out", "ca.crt", "-days", "1", "-subj", "/CN=kairos-test-ca"]);
  await openssl(dir, ["req", "-x509", ...key("other-ca"), "-out", "other-ca.crt", "-days", "1", "-subj", "/CN=kairos-other-ca"]);
  writeFileSync(join(dir, "server.ext"), `${SUBJECT_ALT}\n`);
  for (const name of ["server", "client"]) {
    await openssl(dir, ["req", ...key(name), "-out", `${name}.csr`, "-subj", `/CN=kairos-test-${name}`]);
    await openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", ...(name === "server" ? ["-extfile", "server.ext"] : [])]);
  }
  const f = (n: string) => join(dir, n);
  return {
    dir,
    ca: f("ca.crt"),
    serverCert: f("server.crt"),
    serverKey: f("server.key"),
    clientCert: f("client.crt"),
    clientKey: f("client.key"),
    otherCa: f("other-ca.crt"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsServer extends ServerProcess {
  tlsPort: number;
}

/** TLS on `tlsPort` with client certificates required; outgoing replication and sentinel links over TLS too. */
function tlsLines(files: TlsFiles, tlsPort: number): string[] {
  return [
    `tls-port ${tlsPort}`,
    `tls-cert-file ${files.serverCert}`,
    `tls-key-file ${files.serverKey}`,
    `tls-ca-cert-file ${files.ca}`,
    "tls-auth-clients yes",
    "tls-replication yes",
  ];
}

/** One redis-server with a TLS port (and its plain one). */
export async function startTlsServer(files: TlsFiles, extra: string[] = []): Promise<TlsServer> {
  const tlsPort = await freePort();
  const server = await spawnServer({ conf: () => [...tlsLines(files, tlsPort), ...extra, ""].join("\n") });
  return { ...server, tlsPort };
}

export interface TlsSentinelGroup {
  servers: TlsServer[];
  sentinels: TlsServer[];
  /** `REDIS_SENTINELS` of the group: the sentinels' TLS ports. */
  env: string;
  name: string;
  stop(): Promise<void>;
}

/** 1 primary, 1 replica and 3 sentinels (quorum 2), every link between them over TLS. */
export async function startTlsSentinelGroup(files: TlsFiles): Promise<TlsSentinelGroup> {
  const all: TlsServer[] = [];
  const stop = async () => {
    await Promise.all(all.map((p) => p.stop()));
  };
  try {
    const primary = await startTlsServer(files);
    all.push(primary);
    const replica = await startTlsServer(files, [`replicaof 127.0.0.1 ${primary.tlsPort}`]);
    all.push(replica);
    await waitUntil("the replica to sync over TLS", async () => infoField(await withNode(replica.port, (r) => r.info("replication")), "master_link_status") === "up", 20_000);
    const sentinels: TlsServer[] = [];
    for (let i = 0; i < 3; i++) {
      const tlsPort = await freePort();
      const conf = () =>
        [
          ...tlsLines(files, tlsPort),
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary.tlsPort} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
          `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
          "",
        ].join("\n");
      const s = { ...(await spawnServer({ conf, sentinel: true })), tlsPort };
      all.push(s);
      sentinels.push(s);
    }
    await waitUntil(
      "the sentinels to see the primary and its replica over TLS",
      async () => {
        for (const s of sentinels) {
          const replicas = (await withNode(s.port, (r) => r.call("SENTINEL", "REPLICAS", SENTINEL_NAME))) as unknown[];
          if (replicas.length < 1) return false;
        }
        return true;
      },
      20_000,
    );
    return { servers: [primary, replica], sentinels, env: sentinels.map((s) => `127.0.0.1:${s.tlsPort}`).join(","), name: SENTINEL_NAME, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface TlsCluster {
  nodes: TlsServer[];
  stop(): Promise<void>;
}

/**
 * 3 primaries + 3 replicas with TLS on their client ports, cluster bus and replication
 * (`tls-cluster yes`), formed over TLS by `redis-cli --tls --cluster create`.
 */
export async function startTlsCluster(files: TlsFiles): Promise<TlsCluster> {
  const nodes: TlsServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < 6; i++) {
      const busPort = await freePort();
      nodes.push(await startTlsServer(files, [`cluster-port ${busPort}`, "tls-cluster yes", "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 1000"]));
    }
    const tls = ["--tls", "--cacert", files.ca, "--cert", files.clientCert, "--key", files.clientKey];
    await run("redis-cli", [...tls, "--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.tlsPort}`), "--cluster-replicas", "1", "--cluster-yes"], { timeout: 60_000 });
    await waitUntil(
      "the TLS cluster to be healthy",
      async () => {
        for (const n of nodes) if (infoField(String(await withNode(n.port, (r) => r.call("CLUSTER", "INFO"))), "cluster_state") !== "ok") return false;
        return true;
      },
      30_000,
    );
    return { nodes, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

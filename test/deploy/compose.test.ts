/**
 * docker-compose.yml, checked without Docker (no `docker compose` on the machines that test
 * Kairos): it parses with its anchors and merge keys, every reference in it resolves (services a
 * service depends on, named volumes, files mounted from the repository), every KAIROS_* setting it
 * gives is one Kairos reads, and the tracing and metrics wiring hold together: every role exports
 * spans to the collector's OTLP/HTTP receiver, whose pipeline's parts are defined, and Prometheus
 * scrapes the ports the roles serve /metrics on.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: string[] | Record<string, { condition: string }>;
  volumes?: string[];
  profiles?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
}
const compose = parse(read("docker-compose.yml"), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;

/** Compose's interpolation of `${VAR:-default}` / `${VAR-default}` / `${VAR}` with nothing set. */
const interpolate = (v: string) => String(v).replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_m, d: string | undefined) => d ?? "");
const env = (name: string) => Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));

describe("docker-compose.yml", () => {
  it("every service has an image or a build, and depends only on services of the file", () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.image ?? s.build, `${name}: image or build`).toBeTruthy();
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(Object.keys(services), `${name} depends on ${d}`).toContain(d);
      if (s.depends_on && !Array.isArray(s.depends_on)) {
        for (const [d, c] of Object.entries(s.depends_on)) expect(["service_started", "service_healthy", "service_completed_successfully"], `${name} → ${d}`).toContain(c.condition);
      }
      // A service outside any profile must not wait for one that only runs in a profile.
      if (!s.profiles) for (const d of deps) expect(services[d]!.profiles, `${name} depends on ${d}, which runs only in a profile`).toBeUndefined();
    }
  });

  it("every volume is a declared named volume or a file or folder of the repository", () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(":")[0]!;
        if (source.startsWith("./")) expect(existsSync(join(ROOT, source)), `${name}: ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${name}: volume ${source}`).toContain(source);
      }
    }
  });

  it("every KAIROS_* setting it gives is one Kairos reads (src/config)", () => {
    const configText = readdirSync(join(ROOT, "src/config")).map((f) => read(join("src/config", f))).join("\n");
    for (const [name, s] of Object.entries(services)) {
      for (const key of Object.keys(s.environment ?? {})) if (key.startsWith("KAIROS_")) expect(configText, `${name}: ${key}`).toContain(key);
    }
  });

  it("every Kairos role exports its spans to the collector's OTLP/HTTP receiver, whose pipeline is complete", () => {
    const roles = Object.entries(services).filter(([, s]) => s.image === "kairos:local").map(([n]) => n);
    expect(roles.sort()).toEqual(["api", "executor", "scheduler"]);
    const collector = services["otel-collector"]!;
    expect(collector.image).toMatch(/^otel\/opentelemetry-collector(-contrib)?:\d/);
    for (const role of roles) expect(env(role).KAIROS_OTLP_ENDPOINT, role).toBe("http://otel-collector:4318");

    const mount = collector.volumes!.find((v) => v.includes("config"))!;
    const [source, target] = mount.split(":");
    expect(collector.command).toContain(`--config=${target}`);
    const config = parse(read(source!)) as {
      receivers: Record<string, { protocols: { http: { endpoint: string } } }>;
      processors: Record<string, unknown>;
      exporters: Record<string, { endpoint?: string }>;
      service: { pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
    };
    expect(config.receivers.otlp!.protocols.http.endpoint).toMatch(/:4318$/);
    const traces = config.service.pipelines.traces!;
    for (const r of traces.receivers) expect(Object.keys(config.receivers)).toContain(r);
    for (const p of traces.processors) expect(Object.keys(config.processors)).toContain(p);
    for (const e of traces.exporters) expect(Object.keys(config.exporters)).toContain(e);
    // An exporter to another service names one of the file (the traces' store).
    for (const e of Object.values(config.exporters)) if (e.endpoint) expect(Object.keys(services)).toContain(e.endpoint.split(":")[0]);
  });

  it("Prometheus (profile observability) scrapes the ports the roles serve /metrics on; Grafana loads the dashboard", () => {
    const prom = services.prometheus!;
    expect(prom.profiles).toEqual(["observability"]);
    const configPath = prom.volumes!.find((v) => v.endsWith("prometheus.yml:ro"))!.split(":")[0]!;
    const config = parse(read(configPath)) as { scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }> }> };
    const byService = new Map(config.scrape_configs.map((c) => [c.dns_sd_configs[0]!.names[0]!, c.dns_sd_configs[0]!.port]));
    expect(byService.get("api")).toBe(Number(env("api").KAIROS_PORT));
    for (const role of ["scheduler", "executor"]) expect(byService.get(role), role).toBe(Number(env(role).KAIROS_METRICS_PORT));

    const grafana = services.grafana!;
    expect(grafana.profiles).toEqual(["observability"]);
    const dashboardMount = grafana.volumes!.find((v) => v.startsWith("./deploy/grafana/kairos.json:"))!;
    const provisioning = parse(read("deploy/grafana/provisioning/dashboards/kairos.yaml")) as { providers: Array<{ options: { path: string } }> };
    expect(dashboardMount.split(":")[1]!.startsWith(`${provisioning.providers[0]!.options.path}/`)).toBe(true);
    const datasources = parse(read("deploy/grafana/provisioning/datasources/prometheus.yaml")) as { datasources: Array<{ url: string }> };
    expect(datasources.datasources[0]!.url).toBe(`http://prometheus:${prom.ports![0]!.split(":")[1]}`);
  });
});

describe("docker-compose.yml: which Redis", () => {
  /** The scheduler's settings as compose gives them with `vars` set in the shell. */
  const roleEnv = (vars: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(services.scheduler!.environment ?? {}).map(([k, v]) => [
        k,
        String(v).replace(/\$\{([A-Z0-9_]+)(:?-)?([^}]*)\}/g, (_m, name: string, op: string | undefined, d: string) => {
          const set = vars[name];
          if (op === ":-") return set ? set : d;
          if (op === "-") return set !== undefined ? set : d;
          return set ?? "";
        }),
      ]),
    );
  /** The one-liners the file's comment gives, as shell variables. */
  const oneLiner = (profile: string) => {
    const line = read("docker-compose.yml").split("\n").find((l) => l.includes(`--profile ${profile} up`))!;
    return Object.fromEntries([...line.matchAll(/([A-Z_]+)=(\S*)/g)].map((m) => [m[1]!, m[2]!]));
  };

  it("by default the roles run on the single redis", async () => {
    const { loadConfig } = await import("../../src/config/index.js");
    expect(loadConfig("scheduler", roleEnv({})).redis).toEqual({ kind: "single", url: "redis://redis:6379" });
  });

  it("profile redis-cluster: six cluster nodes formed by a one-shot service with one replica each, and the roles' switch names its primaries", async () => {
    const nodes = Object.entries(services).filter(([, s]) => s.profiles?.includes("redis-cluster") && s.command?.includes("--cluster-enabled"));
    expect(nodes.map(([n]) => n).sort()).toEqual(["redis-c1", "redis-c2", "redis-c3", "redis-c4", "redis-c5", "redis-c6"]);
    for (const [name, s] of nodes) {
      expect(s.command![s.command!.indexOf("--cluster-enabled") + 1], name).toBe("yes");
      expect(s.volumes, name).toEqual([`${name}-data:/data`]); // its own nodes.conf and data
    }
    const init = services["redis-cluster-init"]!;
    expect(init.profiles).toEqual(["redis-cluster"]);
    expect(Object.keys(init.depends_on!).sort()).toEqual(nodes.map(([n]) => n).sort());
    const script = init.command!.join("\n");
    expect(script).toMatch(/redis-cli --cluster create \$\$nodes --cluster-replicas 1 --cluster-yes/);
    for (const [n] of nodes) expect(script).toContain(n);

    const { loadConfig } = await import("../../src/config/index.js");
    const target = loadConfig("scheduler", roleEnv(oneLiner("redis-cluster"))).redis;
    expect(target?.kind).toBe("cluster");
    for (const node of (target as { nodes: Array<{ host: string; port: number }> }).nodes) expect(services[node.host]?.profiles, node.host).toEqual(["redis-cluster"]);
  });

  it("profile redis-sentinel: a primary, a replica of it, three sentinels with quorum 2 under the name the roles' switch gives", async () => {
    const primary = services["redis-s-primary"]!;
    const replica = services["redis-s-replica"]!;
    expect(primary.profiles).toEqual(["redis-sentinel"]);
    expect(replica.command!.join(" ")).toContain("--replicaof redis-s-primary 6379");
    const sentinels = Object.entries(services).filter(([, s]) => s.command?.join(" ").includes("--sentinel"));
    expect(sentinels.map(([n]) => n).sort()).toEqual(["sentinel-1", "sentinel-2", "sentinel-3"]);
    const vars = oneLiner("redis-sentinel");
    for (const [name, s] of sentinels) {
      expect(s.profiles, name).toEqual(["redis-sentinel"]);
      expect(s.command!.join("\n"), name).toContain(`sentinel monitor ${vars.REDIS_SENTINEL_NAME} redis-s-primary 6379 2`);
    }
    const { loadConfig } = await import("../../src/config/index.js");
    const target = loadConfig("scheduler", roleEnv(vars)).redis as { kind: string; name: string; sentinels: Array<{ host: string; port: number }> };
    expect(target.kind).toBe("sentinel");
    expect(target.sentinels.map((s) => s.host).sort()).toEqual(sentinels.map(([n]) => n).sort());
    for (const s of target.sentinels) expect(s.port).toBe(26379);
  });
});

describe("docker-compose.yml: profile redis-tls", () => {
  const CERTS = "/certs/redis";
  const vars = () => {
    const line = read("docker-compose.yml").split("\n").find((l) => l.includes("--profile redis-tls up"))!;
    return Object.fromEntries([...line.matchAll(/([A-Z_]+)=(\S*)/g)].map((m) => [m[1]!, m[2]!]));
  };

  it("a one-shot service makes the certificates into a volume that the TLS server and every role mount; the server requires a client certificate on its TLS port only", () => {
    const certs = services["redis-tls-certs"]!;
    const server = services["redis-tls"]!;
    expect(certs.profiles).toEqual(["redis-tls"]);
    expect(server.profiles).toEqual(["redis-tls"]);
    expect(server.depends_on).toEqual({ "redis-tls-certs": { condition: "service_completed_successfully" } });
    expect(certs.volumes).toEqual([`redis-tls-certs:${CERTS}`]);
    expect(server.volumes).toContain(`redis-tls-certs:${CERTS}:ro`);
    const arg = (name: string) => server.command![server.command!.indexOf(name) + 1];
    expect(arg("--port")).toBe("0"); // no plain-text port
    expect(arg("--tls-auth-clients")).toBe("yes");
    const v = vars();
    expect(v.REDIS_URL).toBe(`rediss://redis-tls:${arg("--tls-port")}`);
    for (const role of ["api", "scheduler", "executor"]) expect(services[role]!.volumes, role).toContain(`redis-tls-certs:${CERTS}:ro`);
    // The roles are given the files the one-shot service writes, from the shell's variables.
    for (const k of ["REDIS_TLS_CA_FILE", "REDIS_TLS_CERT_FILE", "REDIS_TLS_KEY_FILE"]) {
      expect(v[k]!.startsWith(`${CERTS}/`), k).toBe(true);
      expect(certs.command!.join("\n"), k).toContain(`-out ${v[k]!.slice(CERTS.length + 1)}`.replace("-out client.key", "-keyout client.key"));
      expect(String(services.scheduler!.environment![k])).toBe(`\${${k}:-}`);
    }
    for (const k of ["REDIS_TLS", "REDIS_SENTINEL_TLS", "REDIS_TLS_SERVERNAME"]) expect(String(services.scheduler!.environment![k])).toBe(`\${${k}:-}`);
  });

  it("its certificate script, run here, makes files Kairos loads with the profile's variables, and Kairos and the healthcheck talk to a redis-server started with the profile's arguments", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { run, spawnServer } = await import("../helpers/redis-servers.js");
    const { freePort } = await import("../support/local-redis.js");
    const { loadConfig } = await import("../../src/config/index.js");
    const { createRedisClient } = await import("../../src/shared-state/index.js");
    const dir = mkdtempSync(join(tmpdir(), "kairos-compose-tls-"));
    const local = (s: string) => s.replaceAll(CERTS, dir);
    let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
    try {
      // Compose's `$$` is a literal `$`; chown to the images' users is the container's business (not root here).
      const script = local(services["redis-tls-certs"]!.command!.join("\n").replaceAll("$$", "$"));
      const made = await run("sh", ["-c", `chown() { :; }\n${script}`], { timeout: 60_000 });
      expect(made.stdout).toContain("certificates made");
      const again = await run("sh", ["-c", `chown() { :; }\n${script}`], { timeout: 60_000 });
      expect(again.stdout).toContain("certificates already made");

      const cmd = services["redis-tls"]!.command!;
      const tlsPort = await freePort();
      const tlsArgs: string[] = [];
      for (let i = 1; i < cmd.length; i += 2) if (cmd[i]!.startsWith("--tls-")) tlsArgs.push(cmd[i]!, cmd[i] === "--tls-port" ? String(tlsPort) : local(cmd[i + 1]!));
      server = await spawnServer({ args: tlsArgs });

      const v = vars();
      // The scheduler's settings as compose gives them with the one-liner's variables set (files and address here).
      const given = { ...env("scheduler"), ...Object.fromEntries(Object.entries(v).map(([k, val]) => [k, local(val)])), REDIS_URL: `rediss://127.0.0.1:${tlsPort}` };
      const target = loadConfig("scheduler", given).redis!;
      expect(target.kind).toBe("single");
      const redis = createRedisClient(target, { noReconnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.set("compose-tls", "ok");
        expect(await redis.get("compose-tls")).toBe("ok");
      } finally {
        redis.disconnect();
      }
      const health = services["redis-tls"]!.healthcheck as { test: string[] } | undefined;
      const [, bin, ...args] = health!.test.map(local);
      const pong = await run(bin!, args.map((a) => (a === cmd[cmd.indexOf("--tls-port") + 1] ? String(tlsPort) : a)), { timeout: 10_000 });
      expect(pong.stdout.trim()).toBe("PONG");
    } finally {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

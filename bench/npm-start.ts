/**
 * How long `npm start` takes to listen when nothing changed since the last build (as right after
 * `npm ci`, which builds): the build's check (scripts/build.mjs) plus `kairos dev`'s own start.
 * docs/benchmarks.md, "npm start".
 *
 *   node --import tsx bench/npm-start.ts [--rounds N]     # default 3
 *
 * It builds first whatever is stale (so the rounds measure a current build), then starts
 * `npm start -- --port 0 --data-dir <fresh dir>` each round, times it to the banner's GraphQL line
 * and stops it. Run it in a checkout nobody is editing: an edit makes the next round build.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const at = process.argv.indexOf("--rounds");
const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(2)} s`;
}

function timedBuild(): string {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error("npm run build failed");
  return seconds(t0);
}

function npmStart(): Promise<string> {
  const data = mkdtempSync(join(tmpdir(), "kairos-bench-start-"));
  const t0 = performance.now();
  const child = spawn("npm", ["start", "--", "--port", "0", "--data-dir", data], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, KAIROS_LOG_LEVEL: "warn" },
  });
  let seen = "";
  let took: string | null = null;
  return new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (took === null && /GraphQL \(HTTP and WebSocket\)/.test(seen)) {
        took = seconds(t0);
        process.kill(-child.pid!, "SIGTERM");
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      rmSync(data, { recursive: true, force: true });
      if (took !== null) resolve(took);
      else reject(new Error(`npm start exited (${code}) before listening:\n${seen.slice(-2000)}`));
    });
  });
}

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
console.log(`build first (what is stale): ${timedBuild()}`);
console.log(`build again (nothing changed): ${timedBuild()}`);
for (let i = 1; i <= rounds; i++) console.log(`npm start → listening, round ${i}: ${await npmStart()}`);
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);

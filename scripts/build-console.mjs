#!/usr/bin/env node
/**
 * Builds the web console (console/ → dist/console) when it is missing or a source under console/
 * or generated/client/ is newer than the build. `npm run build` always builds it; the test suite's
 * global setup calls this so the browser tests never drive a stale console.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = join(root, "dist/console/index.html");

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

let builtAt = 0;
try {
  builtAt = statSync(built).mtimeMs;
} catch {
  // not built yet
}
const sources = Math.max(newest(join(root, "console")), newest(join(root, "generated/client")));
if (builtAt < sources) {
  // Built beside the live copy and swapped in by renames: a test or server reading dist/console
  // meanwhile (another run in the same checkout) never sees it half-written or empty.
  const fresh = join(root, `dist/console.build-${process.pid}`);
  const old = join(root, `dist/console.old-${process.pid}`);
  execFileSync(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "build", "--config", "console/vite.config.ts", "--logLevel", "warn", "--outDir", fresh], {
    cwd: root,
    stdio: "inherit",
    // Always the production build: called from vitest, NODE_ENV is "test", and Vite would bundle React's development build.
    env: { ...process.env, NODE_ENV: "production" },
  });
  const live = join(root, "dist/console");
  if (existsSync(live)) renameSync(live, old);
  renameSync(fresh, live);
  rmSync(old, { recursive: true, force: true });
}

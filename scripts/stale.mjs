/**
 * The one "is this build output stale?" decision that every build step uses (scripts/build.mjs,
 * build-native.mjs, build-console.mjs, and through them `npm start` and the test suite's setup):
 * an output is stale when it is missing or any of its inputs was modified after it.
 *
 * An output's time is the time its build *started* (markBuilt), so a source saved while a build
 * runs is newer than the output and builds again next time; a failed build marks its output stale
 * (markFailed), so the next build reports the errors again instead of starting from a broken one.
 */
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * What every step depends on besides its sources: the dependencies as installed. npm rewrites
 * node_modules/.package-lock.json whenever it changes node_modules (npm ci, npm install).
 */
export const INSTALLED = ["package-lock.json", "node_modules/.package-lock.json"];

/** The newest file under `paths` (files or folders, relative to the root), skipping `exclude`. */
function newest(paths, exclude) {
  let best = { path: null, mtimeMs: 0 };
  const visit = (abs) => {
    if (exclude.some((x) => abs === resolve(root, x))) return;
    let st;
    try {
      st = statSync(abs);
    } catch {
      return; // an optional input that is not there (node_modules/.package-lock.json before an install)
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(abs)) visit(join(abs, name));
    } else if (st.mtimeMs > best.mtimeMs) {
      best = { path: abs, mtimeMs: st.mtimeMs };
    }
  };
  for (const p of paths) visit(resolve(root, p));
  return best;
}

/**
 * Why `output` must be built again, or null when it is current.
 * @param {{ output: string, inputs: string[], exclude?: string[], also?: string[] }} step
 *   `output`: the file whose time stands for the build; `also`: other outputs that must exist.
 */
export function staleReason({ output, inputs, exclude = [], also = [] }) {
  const missing = [output, ...also].find((p) => !existsSync(resolve(root, p)));
  if (missing) return `${relative(root, resolve(root, missing))} is missing`;
  const builtAt = statSync(resolve(root, output)).mtimeMs;
  const changed = newest(inputs, exclude);
  return changed.mtimeMs > builtAt ? `${relative(root, changed.path)} changed` : null;
}

/** Dates `output` to when its build started (see above). */
export function markBuilt(output, startedAtMs) {
  const t = startedAtMs / 1000;
  utimesSync(resolve(root, output), t, t);
}

/** Dates `output` to 1970 when its build failed, so the next build runs the step again. */
export function markFailed(output) {
  if (existsSync(resolve(root, output))) utimesSync(resolve(root, output), 0, 0);
}

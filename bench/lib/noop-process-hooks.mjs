/**
 * `node [--import tsx] --import ./bench/lib/noop-process-hooks.mjs <main> executor`: the real
 * executor (compiled, or from the sources under tsx), except that its modules' `./process.js`
 * import (src/executor/process.ts, which spawns the run's OS process) resolves to
 * bench/lib/noop-process.mjs, and their `./sandbox/sandbox.js` import to bench/lib/noop-sandbox.mjs
 * (no process, so nothing to sandbox). Used only by the benchmarks, to measure Kairos's dispatch
 * path (ready queue → claim → result) without the cost of a process (and its sandbox) per run.
 * Registered after tsx, so this resolve hook runs first.
 */
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
const NOOP = ${JSON.stringify(new URL("./noop-process.mjs", import.meta.url).href)};
const NOOP_SANDBOX = ${JSON.stringify(new URL("./noop-sandbox.mjs", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  const fromExecutor = context.parentURL && /\\/executor\\/[^\\/]+\\.[jt]s(\\?.*)?$/.test(context.parentURL);
  if (fromExecutor && specifier === "./process.js") return { url: NOOP, format: "module", shortCircuit: true };
  if (fromExecutor && specifier === "./sandbox/sandbox.js") return { url: NOOP_SANDBOX, format: "module", shortCircuit: true };
  return next(specifier, context);
}`),
);

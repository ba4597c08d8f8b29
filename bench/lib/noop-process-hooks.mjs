/**
 * `node [--import tsx] --import ./bench/lib/noop-process-hooks.mjs <main> executor`: the real
 * executor (compiled, or from the sources under tsx), except that its `./process.js` import
 * (src/executor/process.ts, which spawns the run's OS process) resolves to
 * bench/lib/noop-process.mjs. Used only by the benchmarks, to measure
 * Kairos's dispatch path (ready queue → claim → result) without the cost of a process per run.
 * Registered after tsx, so this resolve hook runs first.
 */
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
const NOOP = ${JSON.stringify(new URL("./noop-process.mjs", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  if (specifier === "./process.js" && context.parentURL && /\\/executor\\/executor\\.[jt]s(\\?.*)?$/.test(context.parentURL)) {
    return { url: NOOP, format: "module", shortCircuit: true };
  }
  return next(specifier, context);
}`),
);

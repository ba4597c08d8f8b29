/**
 * The order test files start in: longest first, so the two workers end together.
 *
 * Vitest's own order uses the durations of the last run on this machine (node_modules/.vite), and
 * without them (a fresh clone, the CI) the file's size in bytes. Size says little here: the chaos
 * cluster (test/chaos/cluster.test.ts, 63 lines) runs for a minute and started near the end, while
 * one worker waited. So a file with no duration of its own takes the one recorded in
 * test/setup/durations.json (seconds, from a whole run: `node test/setup/record-durations.mjs
 * <vitest JSON report>` writes it again), and a file in neither counts as short (larger ones first among those). Failed files still
 * run first, as in Vitest's order.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const recorded: Record<string, number> = JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8"));

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const known = (f: TestSpecification) => {
      const path = relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${path}`);
      const size = this.ctx.cache.getFileStats(`${f.project.name}:${path}`)?.size ?? 0;
      return { failed: cached?.failed ?? false, ms: cached?.duration ?? (recorded[path] ?? 0) * 1000, size };
    };
    const keyed = files.map((f) => ({ f, ...known(f) }));
    keyed.sort((a, b) => Number(b.failed) - Number(a.failed) || b.ms - a.ms || b.size - a.size);
    return keyed.map((k) => k.f);
  }
}

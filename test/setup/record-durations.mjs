// Writes test/setup/durations.json (what test/setup/sequencer.ts orders a fresh clone's run by)
// from a whole run's JSON report: `npx vitest run --reporter=json --outputFile=report.json`, then
// `node test/setup/record-durations.mjs report.json`. Seconds per file, longest first.
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const [report] = process.argv.slice(2);
if (!report) throw new Error("usage: node test/setup/record-durations.mjs <vitest JSON report>");
const root = new URL("../..", import.meta.url).pathname;
const rows = JSON.parse(readFileSync(report, "utf8"))
  .testResults.map((r) => [relative(root, r.name), Math.round((r.endTime - r.startTime) / 100) / 10])
  .sort((a, b) => b[1] - a[1]);
writeFileSync(new URL("./durations.json", import.meta.url), `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
process.stdout.write(`${rows.length} files, ${rows.reduce((s, r) => s + r[1], 0).toFixed(0)} s in all\n`);

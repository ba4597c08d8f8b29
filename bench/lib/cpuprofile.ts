/**
 * Summarise V8 CPU profiles (`node --cpu-prof`) the benchmarks write: where a process spent its
 * CPU, by function (self time) and by source area (src/core, node_modules/mongodb, node internals…),
 * plus inclusive time of chosen functions.
 *
 *   node --import tsx bench/lib/cpuprofile.ts FILE.cpuprofile [--top 25] [--focus name,name]
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  gcMs: number;
  byFunction: Array<{ name: string; ms: number }>;
  byArea: Array<{ area: string; ms: number }>;
  inclusive: Array<{ name: string; ms: number }>;
  /** Self time charged to the nearest Kairos (src/) function on the stack, else to the area on top. */
  bySrcCaller: Array<{ name: string; ms: number }>;
}

/** Groups a script URL into an area: "src/core/runs/claims.ts", "mongodb", "node:internal", "(native)". */
export function areaOf(url: string): string {
  if (!url) return "(native/V8)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  const src = kairosPath(url);
  if (src !== null) return src;
  return url.replace(/^file:\/\//, "");
}

/** A Kairos source file's path from src/ (a tsx run's src/…, a compiled bench's .kairos/bench-dist/…), else null. */
function kairosPath(url: string): string | null {
  const dist = url.indexOf("/.kairos/bench-dist/");
  if (dist >= 0) return `src/${url.slice(dist + "/.kairos/bench-dist/".length)}`.replace(/\?.*$/, "");
  const src = url.indexOf("/src/");
  return src >= 0 ? url.slice(src + 1).replace(/\?.*$/, "") : null;
}

export function summarizeProfile(path: string, focus: string[] = []): ProfileSummary {
  const p = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const byId = new Map<number, ProfileNode>();
  for (const n of p.nodes) byId.set(n.id, n);
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>(); // node id → µs
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  let gc = 0;
  const fn = new Map<string, number>();
  const area = new Map<string, number>();
  const incl = new Map<string, number>();
  const srcCaller = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    total += us;
    if (functionName === "(idle)") {
      idle += us;
      continue;
    }
    if (functionName === "(garbage collector)") gc += us;
    const key = `${functionName || "(anonymous)"} ${areaOf(url)}:${lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const a = functionName.startsWith("(") ? functionName : areaOf(url);
    area.set(a, (area.get(a) ?? 0) + us);
    let charged: string | null = null;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (kairosPath(cf.url) !== null) {
        charged = `${cf.functionName || "(anonymous)"} ${areaOf(cf.url)}`;
        break;
      }
    }
    charged ??= `(no Kairos frame) ${a}`;
    srcCaller.set(charged, (srcCaller.get(charged) ?? 0) + us);
    if (focus.length) {
      // Inclusive: charge each focused function once per sample on the stack.
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = byId.get(cur)!.callFrame.functionName;
        if (focus.includes(f) && !seen.has(f)) {
          seen.add(f);
          incl.set(f, (incl.get(f) ?? 0) + us);
        }
      }
    }
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    gcMs: gc / 1000,
    byFunction: sorted(fn).map(([name, us]) => ({ name, ms: us / 1000 })),
    byArea: sorted(area).map(([a, us]) => ({ area: a, ms: us / 1000 })),
    inclusive: sorted(incl).map(([name, us]) => ({ name, ms: us / 1000 })),
    bySrcCaller: sorted(srcCaller).map(([name, us]) => ({ name, ms: us / 1000 })),
  };
}

function main(): void {
  const args = process.argv.slice(2);
  const top = Number(args[args.indexOf("--top") + 1] ?? 25) || 25;
  const fi = args.indexOf("--focus");
  const focus = fi >= 0 ? args[fi + 1]!.split(",") : [];
  for (const file of args.filter((a) => a.endsWith(".cpuprofile"))) {
    const s = summarizeProfile(file, focus);
    const busy = s.totalMs - s.idleMs;
    const pct = (ms: number) => `${((100 * ms) / Math.max(1, busy)).toFixed(1)}%`;
    console.log(`\n== ${file}\n   profiled ${(s.totalMs / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(2)} s, GC ${pct(s.gcMs)} of busy`);
    console.log("   by area (self):");
    for (const a of s.byArea.slice(0, top)) console.log(`     ${pct(a.ms).padStart(6)}  ${a.ms.toFixed(0).padStart(7)} ms  ${a.area}`);
    console.log("   by function (self):");
    for (const f of s.byFunction.slice(0, top)) console.log(`     ${pct(f.ms).padStart(6)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`);
    console.log("   charged to the nearest Kairos function on the stack (else the area on top):");
    for (const f of s.bySrcCaller.slice(0, top)) console.log(`     ${pct(f.ms).padStart(6)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`);
    if (s.inclusive.length) {
      console.log("   inclusive:");
      for (const f of s.inclusive) console.log(`     ${pct(f.ms).padStart(6)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`);
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();

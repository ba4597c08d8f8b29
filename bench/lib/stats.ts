/**
 * Small statistics and formatting helpers shared by every benchmark (Kairos side and BullMQ side).
 *
 * Percentiles use the nearest-rank method on the sorted sample: pXX is the smallest value such that
 * at least XX % of the samples are ≤ it (so p100 = max, and with 20,000 samples p99 is the 19,800th
 * smallest). No interpolation: every reported figure is a value that was actually observed.
 */

/** Distribution summary of a sample (milliseconds for every lateness figure in the benches). */
export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an already ascending-sorted array; NaN when empty. `p` in [0, 100]. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  if (p <= 0) return sorted[0]!;
  if (p >= 100) return sorted[n - 1]!;
  const rank = Math.ceil((p / 100) * n); // 1-based
  return sorted[Math.min(n, Math.max(1, rank)) - 1]!;
}

/** Nearest-rank percentile of an unsorted array (copies and sorts it). */
export function percentile(values: ArrayLike<number>, p: number): number {
  return percentileSorted(Float64Array.from(values).sort(), p);
}

/** p50/p95/p99/max/mean/min/count of `values`. An empty sample gives count 0 and NaN elsewhere. */
export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort(); // typed-array sort is numeric
  const n = sorted.length;
  if (n === 0) {
    return { count: 0, min: Number.NaN, mean: Number.NaN, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN };
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  return {
    count: n,
    min: sorted[0]!,
    mean: sum / n,
    p50: percentileSorted(sorted, 50),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
    max: sorted[n - 1]!,
  };
}

/** Milliseconds for a table cell: "12 ms", "1.23 s", "0.4 ms"; "—" for NaN/undefined. */
export function fmtMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return "—";
  const a = Math.abs(ms);
  if (a >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (a >= 1_000) return `${(ms / 1000).toFixed(2)} s`;
  if (a >= 10) return `${Math.round(ms)} ms`;
  if (a >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** An integer or a rate with thousands separators: 20000 → "20,000", 1234.5 → "1,234.5". */
export function fmtNum(n: number | null | undefined, fractionDigits = 0): string {
  if (n == null || !Number.isFinite(n)) return "—";
  return n.toLocaleString("en-US", { minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits });
}

/**
 * `a / b` as a factor, e.g. ratio(bullmqP99, kairosP99) → "12.4×" ("Kairos is 12.4× lower").
 * Both sides are first raised to `floor` (default 1 — for lateness in ms this means "anything under
 * 1 ms counts as 1 ms", so a 0 ms p50 does not turn into an infinite ratio; pass 0 to disable).
 * Returns "—" when either side is missing/NaN, and "∞" when the (floored) divisor is 0.
 */
export function ratio(a: number | null | undefined, b: number | null | undefined, floor = 1): string {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b)) return "—";
  const x = Math.max(a, floor);
  const y = Math.max(b, floor);
  if (y === 0) return x === 0 ? "1.00×" : "∞";
  const r = x / y;
  if (r >= 100) return `${Math.round(r)}×`;
  if (r >= 10) return `${r.toFixed(1)}×`;
  if (r >= 0.1) return `${r.toFixed(2)}×`;
  return `${r.toPrecision(2)}×`;
}

export type Cell = string | number | null | undefined;

/**
 * Render rows as an aligned plain-text table. Numbers are formatted with {@link fmtNum} and
 * right-aligned; strings that look numeric ("12 ms", "3.4×", "1,234") are right-aligned too, other
 * strings left-aligned. The first column is always left-aligned.
 */
export function table(headers: string[], rows: Cell[][], opts: { title?: string; indent?: number } = {}): string {
  const text = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const right = headers.map((_, i) => i > 0 && text.every((r) => r[i] === "" || r[i] === "—" || /^[-+~≈<>]?[\d∞]/.test(r[i]!)));
  const pad = " ".repeat(opts.indent ?? 2);
  const line = (cells: string[]) =>
    pad + cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  const out: string[] = [];
  if (opts.title) out.push(opts.title);
  out.push(line(headers));
  out.push(pad + widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of text) out.push(line(r));
  return out.join("\n");
}

function cellText(c: Cell): string {
  if (c == null) return "";
  if (typeof c === "number") return Number.isInteger(c) ? fmtNum(c) : fmtNum(c, 1);
  return c;
}

/** The standard lateness columns, in the order of {@link summaryCells}. */
export const SUMMARY_HEADERS = ["p50", "p95", "p99", "max", "mean", "n"] as const;

/** A {@link Summary} as table cells matching {@link SUMMARY_HEADERS}. */
export function summaryCells(s: Summary): string[] {
  return [fmtMs(s.p50), fmtMs(s.p95), fmtMs(s.p99), fmtMs(s.max), fmtMs(s.mean), fmtNum(s.count)];
}

/** One-line form: "p50 3.0 ms · p95 12 ms · p99 40 ms · max 61 ms · mean 5.1 ms · n 20,000". */
export function summaryLine(s: Summary): string {
  return SUMMARY_HEADERS.map((h, i) => `${h} ${summaryCells(s)[i]}`).join(" · ");
}

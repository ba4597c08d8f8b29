/**
 * Prometheus metrics in the text exposition format, without a dependency: counters, gauges
 * sampled at scrape time, and histograms with fixed buckets. One registry per process.
 */
type Labels = Record<string, string>;

const key = (labels: Labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]!.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
    .join(",");

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" | "histogram",
  ) {}
  abstract lines(): Promise<string[]>;
}

export class Counter extends Metric {
  private values = new Map<string, number>();
  constructor(name: string, help: string) {
    super(name, help, "counter");
  }
  inc(labels: Labels = {}, by = 1): void {
    const k = key(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(key(labels)) ?? 0;
  }
  async lines(): Promise<string[]> {
    return [...this.values].map(([k, v]) => `${this.name}${k ? `{${k}}` : ""} ${v}`);
  }
}

export class Histogram extends Metric {
  private series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[],
  ) {
    super(name, help, "histogram");
  }
  observe(value: number, labels: Labels = {}): void {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  async lines(): Promise<string[]> {
    const out: string[] = [];
    for (const [k, s] of this.series) {
      const sep = k ? "," : "";
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket{${k}${sep}le="${b}"} ${s.counts[i]}`));
      out.push(`${this.name}_bucket{${k}${sep}le="+Inf"} ${s.count}`);
      out.push(`${this.name}_sum${k ? `{${k}}` : ""} ${s.sum}`);
      out.push(`${this.name}_count${k ? `{${k}}` : ""} ${s.count}`);
    }
    return out;
  }
}

/** A gauge whose values are read when scraped (queue depths, node counts). */
export class SampledGauge extends Metric {
  constructor(
    name: string,
    help: string,
    private readonly sample: () => Promise<Array<[Labels, number]>>,
  ) {
    super(name, help, "gauge");
  }
  async lines(): Promise<string[]> {
    return (await this.sample()).map(([l, v]) => `${this.name}${Object.keys(l).length ? `{${key(l)}}` : ""} ${v}`);
  }
}

export class Registry {
  private metrics = new Map<string, Metric>();

  register<M extends Metric>(m: M): M {
    const existing = this.metrics.get(m.name);
    if (existing) return existing as M;
    this.metrics.set(m.name, m);
    return m;
  }

  unregister(name: string): void {
    this.metrics.delete(name);
  }

  async render(): Promise<string> {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      let lines: string[];
      try {
        lines = await m.lines();
      } catch {
        continue; // a failed sample (store unreachable) must not break the whole scrape
      }
      out.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`, ...lines);
    }
    return `${out.join("\n")}\n`;
  }
}

export const registry = new Registry();

const LATENESS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The metrics the components record; names follow Prometheus conventions. */
export const metrics = {
  fires: registry.register(new Counter("kairos_fires_total", "Schedule slots by their recorded outcome (the fire ledger).")),
  fireLateness: registry.register(
    new Histogram("kairos_fire_lateness_seconds", "How late a slot was handled after its nominal time.", LATENESS_BUCKETS),
  ),
  runsFinished: registry.register(new Counter("kairos_runs_finished_total", "Runs that reached a final status, by status.")),
  attempts: registry.register(new Counter("kairos_attempts_total", "Attempts ended, by outcome.")),
  claimLatency: registry.register(
    new Histogram("kairos_claim_latency_seconds", "From QUEUED to claimed by an executor.", LATENESS_BUCKETS),
  ),
  staleResults: registry.register(new Counter("kairos_stale_results_total", "Results refused because the fencing token was stale.")),
};

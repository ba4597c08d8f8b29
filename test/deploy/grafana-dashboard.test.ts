/**
 * deploy/grafana/kairos.json: every metric its PromQL queries name is one a running Kairos exports
 * on /metrics (a dev app's output: `# TYPE` lines, histograms with their _bucket/_sum/_count
 * series), and every label it filters or groups by is a label of those metrics (prom-client's
 * registry) or one Prometheus adds (instance, job, le). A renamed metric fails here, not on a
 * dashboard gone blank.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registry } from "../../src/support/metrics.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

const ROOT = join(import.meta.dirname, "..", "..");

interface Panel {
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string }>;
}
const dashboard = JSON.parse(readFileSync(join(ROOT, "deploy/grafana/kairos.json"), "utf8")) as { uid: string; title: string; panels: Panel[]; templating: { list: Array<{ name: string; type: string }> } };
const queryPanels = dashboard.panels.filter((p) => p.type !== "row");

const PROMQL_WORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool", "inf", "nan"]);
const SCRAPE_LABELS = new Set(["instance", "job", "le"]);

/** The metric names of a PromQL expression, its label matchers and its grouping labels. */
export function promqlParts(expr: string): { metrics: string[]; matchers: Array<{ metric: string; label: string }>; grouping: string[] } {
  const matchers: Array<{ metric: string; label: string }> = [];
  const grouping: string[] = [];
  let e = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  e = e.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g, (_m, metric: string, body: string) => {
    for (const m of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)) matchers.push({ metric, label: m[1]! });
    return metric;
  });
  e = e.replace(/\b(by|without)\s*\(([^)]*)\)/g, (_m, _w, labels: string) => {
    grouping.push(...labels.split(",").map((l) => l.trim()).filter(Boolean));
    return "";
  });
  e = e.replace(/\[[^\]]*\]/g, "").replace(/\$__\w+/g, "");
  const metrics: string[] = [];
  for (const m of e.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (call || PROMQL_WORDS.has(name!.toLowerCase()) || /^\d/.test(name!)) continue;
    if (/^[0-9.e-]+$/.test(name!)) continue;
    metrics.push(name!);
  }
  return { metrics, matchers, grouping };
}

describe("the Grafana dashboard (deploy/grafana/kairos.json)", () => {
  let app: TestApp;
  /** Series names a scrape may hold: each TYPE'd metric, and a histogram's or summary's parts. */
  const exported = new Map<string, string>();

  beforeAll(async () => {
    app = await startTestApp();
    const text = await (await fetch(app.url.replace(/\/graphql$/, "/metrics"))).text();
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const [, name, type] = m;
      exported.set(name!, name!);
      if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) exported.set(name! + s, name!);
      if (type === "summary") for (const s of ["_sum", "_count"]) exported.set(name! + s, name!);
    }
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("reads a real scrape (the app exports Kairos's own metrics)", () => {
    expect(exported.get("kairos_fires_total")).toBe("kairos_fires_total");
    expect(exported.get("kairos_queue_depth")).toBe("kairos_queue_depth");
  });

  it("names only metrics the app exports, and filters and groups by their labels", () => {
    expect(queryPanels.length).toBeGreaterThanOrEqual(10);
    const used = new Set<string>();
    for (const p of queryPanels) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        const { metrics, matchers, grouping } = promqlParts(t.expr);
        expect(metrics.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        const labels = new Set<string>(SCRAPE_LABELS);
        for (const m of metrics) {
          expect(exported.has(m), `${p.title}: ${m} is not on /metrics`).toBe(true);
          used.add(exported.get(m)!);
          const metric = registry.getSingleMetric(exported.get(m)!) as { labelNames?: readonly string[] } | undefined;
          for (const l of metric?.labelNames ?? []) labels.add(l);
        }
        for (const { metric, label } of matchers) expect(labels.has(label), `${p.title}: ${metric}{${label}}`).toBe(true);
        for (const g of grouping) expect(labels.has(g), `${p.title}: by (${g})`).toBe(true);
      }
    }
    // Every metric Kairos itself defines has a panel.
    const ours = [...exported.values()].filter((n) => n.startsWith("kairos_"));
    for (const n of new Set(ours)) expect(used.has(n), `${n} has no panel`).toBe(true);
  });

  it("every panel says what it shows and queries the dashboard's Prometheus data source", () => {
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: "datasource", type: "datasource" }));
    for (const p of queryPanels) {
      expect(p.description, p.title).toBeTruthy();
      expect(p.datasource, p.title).toEqual({ type: "prometheus", uid: "${datasource}" });
    }
  });

  it("the PromQL reader finds what a query names", () => {
    expect(promqlParts('histogram_quantile(0.99, sum by (le, cause) (rate(kairos_recovery_seconds_bucket{cause!="x"}[$__rate_interval])))')).toEqual({
      metrics: ["kairos_recovery_seconds_bucket"],
      matchers: [{ metric: "kairos_recovery_seconds_bucket", label: "cause" }],
      grouping: ["le", "cause"],
    });
    expect(promqlParts("sum(rate(a_total[15m])) / clamp_min(sum(rate(b_total[15m])), 1e-9)").metrics).toEqual(["a_total", "b_total"]);
  });
});

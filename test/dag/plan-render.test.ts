/** Graph rendering (src/dag/plan/render.ts): Mermaid and DOT, states as colours, hostile keys. */
import { describe, expect, it } from "vitest";
import { renderDot, renderGraph, renderMermaid, type DagDef } from "../../src/dag/index.js";
import { DagTaskState as S, GraphFormat } from "../../src/domain/index.js";

const etl: DagDef = {
  tasks: [
    { key: "extract", dependsOn: [] },
    { key: "transform", dependsOn: ["extract"], mapOver: "extract" },
    { key: "load", dependsOn: ["transform"] },
  ],
};

describe("renderMermaid", () => {
  it("draws nodes by generated id, edges parent → child, mapped tasks as subroutines", () => {
    expect(renderMermaid(etl)).toBe(
      ["flowchart TD", '  t0["extract"]', '  t1[["transform"]]', '  t2["load"]', "  t0 --> t1", "  t1 --> t2", ""].join("\n"),
    );
  });

  it("colours a run's states with one class per state used", () => {
    const text = renderMermaid(etl, { extract: S.SUCCEEDED, transform: S.FAILED, load: S.UPSTREAM_FAILED });
    expect(text).toContain("  class t0 succeeded\n");
    expect(text).toContain("  class t2 upstream_failed\n");
    expect(text).toContain("  classDef failed fill:#ffcdd2,stroke:#c62828\n");
    expect(text.match(/classDef/g)).toHaveLength(3);
  });

  it("keeps a hostile key inside its label", () => {
    const key = 'x"]\n  click t0 call alert(1)\n  t9["<b>%%';
    const text = renderMermaid({ tasks: [{ key, dependsOn: [] }] });
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^ {2}t0\["[A-Za-z0-9 _#;-]*"\]$/);
    expect(lines[1]).toContain("#34;#93;#10;");
  });
});

describe("renderDot", () => {
  it("draws a digraph with labels, edges and mapped boxes", () => {
    expect(renderDot(etl)).toBe(
      [
        "digraph dag {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff"];',
        '  t0 [label="extract"];',
        '  t1 [label="transform", shape=box3d];',
        '  t2 [label="load"];',
        "  t0 -> t1;",
        "  t1 -> t2;",
        "}",
        "",
      ].join("\n"),
    );
  });

  it("fills nodes by state", () => {
    expect(renderDot(etl, { extract: S.RUNNING })).toContain('  t0 [label="extract", fillcolor="#bbdefb", color="#1565c0", tooltip="RUNNING"];');
  });

  it("keeps a hostile key inside its quoted label", () => {
    const key = 'a\\"]; evil -> x; b [label="\n';
    const text = renderDot({ tasks: [{ key, dependsOn: [] }] });
    const line = text.split("\n")[3]!;
    expect(line).toBe('  t0 [label="a\\\\\\"]; evil -> x; b [label=\\" "];');
    expect(text.split("\n")).toHaveLength(6);
  });
});

describe("renderGraph", () => {
  it("picks the format", () => {
    expect(renderGraph(etl, GraphFormat.MERMAID)).toBe(renderMermaid(etl));
    expect(renderGraph(etl, GraphFormat.DOT, { load: S.SKIPPED })).toBe(renderDot(etl, { load: S.SKIPPED }));
  });
});

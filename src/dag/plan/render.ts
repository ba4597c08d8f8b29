/**
 * The graph of a DAG as text a person can view: Mermaid (`flowchart TD`) or Graphviz DOT
 * (`digraph`), optionally coloured by a DAG run's task states. Node ids are generated (`t0`,
 * `t1`, … by declaration order), never taken from keys, and keys appear only inside escaped
 * labels, so no key can break out of the syntax, whatever validation let through.
 */
import { DagTaskState, GraphFormat } from "../../domain/index.js";
import { indexGraph } from "./graph.js";
import type { DagDef } from "./types.js";

/** Task states by key, to colour the nodes (a DAG run's view). */
export type StateColours = Readonly<Record<string, DagTaskState>>;

/** Fill and stroke per state. */
const COLOURS: Record<DagTaskState, { fill: string; stroke: string }> = {
  PENDING: { fill: "#ffffff", stroke: "#9e9e9e" },
  QUEUED: { fill: "#fff9c4", stroke: "#f9a825" },
  RUNNING: { fill: "#bbdefb", stroke: "#1565c0" },
  RETRYING: { fill: "#ffe082", stroke: "#ff8f00" },
  SUCCEEDED: { fill: "#c8e6c9", stroke: "#2e7d32" },
  FAILED: { fill: "#ffcdd2", stroke: "#c62828" },
  UPSTREAM_FAILED: { fill: "#ffe0b2", stroke: "#ef6c00" },
  SKIPPED: { fill: "#eeeeee", stroke: "#757575" },
  CANCELLED: { fill: "#d7ccc8", stroke: "#4e342e" },
};

/** Renders the DAG in `format`; see `renderMermaid` and `renderDot`. */
export function renderGraph(dag: DagDef, format: GraphFormat, states?: StateColours): string {
  return format === GraphFormat.DOT ? renderDot(dag, states) : renderMermaid(dag, states);
}

/** Mermaid `flowchart TD`; mapped tasks drawn as subroutines (`[[…]]`), states as classes. */
export function renderMermaid(dag: DagDef, states?: StateColours): string {
  const graph = indexGraph(dag);
  const mapped = mappedKeys(dag);
  const id = (key: string) => `t${graph.position.get(key)}`;
  const lines = ["flowchart TD"];
  for (const key of graph.keys) {
    const label = `"${mermaidText(key)}"`;
    lines.push(`  ${id(key)}${mapped.has(key) ? `[[${label}]]` : `[${label}]`}`);
  }
  for (const key of graph.keys) for (const child of graph.children.get(key)!) lines.push(`  ${id(key)} --> ${id(child)}`);
  if (states !== undefined) {
    const used = new Set<DagTaskState>();
    for (const key of graph.keys) {
      const state = states[key];
      if (state === undefined || !(state in COLOURS)) continue;
      used.add(state);
      lines.push(`  class ${id(key)} ${state.toLowerCase()}`);
    }
    for (const state of used) lines.push(`  classDef ${state.toLowerCase()} fill:${COLOURS[state].fill},stroke:${COLOURS[state].stroke}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Graphviz `digraph`; mapped tasks drawn as stacked boxes (`box3d`), states as fill colours. */
export function renderDot(dag: DagDef, states?: StateColours): string {
  const graph = indexGraph(dag);
  const mapped = mappedKeys(dag);
  const id = (key: string) => `t${graph.position.get(key)}`;
  const lines = ["digraph dag {", "  rankdir=TB;", '  node [shape=box, style="rounded,filled", fillcolor="#ffffff"];'];
  for (const key of graph.keys) {
    const attrs = [`label="${dotText(key)}"`];
    if (mapped.has(key)) attrs.push("shape=box3d");
    const state = states?.[key];
    if (state !== undefined && state in COLOURS) {
      attrs.push(`fillcolor="${COLOURS[state].fill}"`, `color="${COLOURS[state].stroke}"`, `tooltip="${state}"`);
    }
    lines.push(`  ${id(key)} [${attrs.join(", ")}];`);
  }
  for (const key of graph.keys) for (const child of graph.children.get(key)!) lines.push(`  ${id(key)} -> ${id(child)};`);
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

function mappedKeys(dag: DagDef): Set<string> {
  return new Set(dag.tasks.filter((t) => t.mapOver !== undefined).map((t) => t.key));
}

/** Inside a quoted Mermaid label: anything but letters, digits, space, `_` and `-` as `#code;`. */
function mermaidText(text: string): string {
  return [...text].map((c) => (/^[A-Za-z0-9 _-]$/.test(c) ? c : `#${c.codePointAt(0)};`)).join("");
}

/** Inside a quoted DOT string: backslash and quote escaped, line breaks and controls dropped. */
function dotText(text: string): string {
  return text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\u0000-\u001f\u007f]/g, " ");
}

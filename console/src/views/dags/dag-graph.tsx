/**
 * A DAG drawn as SVG: tasks as labelled boxes coloured by their state, with the state's icon and
 * word inside (colour is never the only cue), dependencies as curves with arrowheads. Everything of
 * the user's (task keys) is a React text node. The picture is one image to assistive technology,
 * named with its tasks and states; the views list the same in text (the grid, the timeline).
 */
import { useId, useMemo } from "react";
import type { DagTaskState } from "../../../../generated/client/graphql";
import { edgePath, layoutDag, NODE_H, NODE_W, type LayoutTask } from "./layout";
import { look, StateLegend } from "./states";

export interface GraphTask extends LayoutTask {
  mapOver?: string | null;
}

export interface NodeState {
  status?: DagTaskState | null;
  /** A mapped task's instances by state, when expanded. */
  instances?: Map<DagTaskState, number>;
}

const MAX_LABEL = 21;
const clip = (s: string, n = MAX_LABEL) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function DagGraph({ tasks, states, label }: { tasks: readonly GraphTask[]; states: (key: string) => NodeState; label: string }) {
  const layout = useMemo(() => layoutDag(tasks), [tasks]);
  const arrow = `arrow-${useId().replace(/[^A-Za-z0-9_-]/g, "")}`;
  const mapped = useMemo(() => new Set(tasks.filter((t) => t.mapOver).map((t) => t.key)), [tasks]);
  const per = layout.order.map((k) => ({ key: k, s: states(k) }));
  const summary = per.slice(0, 40).map(({ key, s }) => `${key}: ${look(s.status).word}`).join(", ");
  const more = per.length > 40 ? `, and ${per.length - 40} more` : "";

  return (
    <figure className="dag-graph">
      <div className="dag-graph-scroll" tabIndex={0} role="region" aria-label={`${label} (scrollable)`}>
        <svg
          role="img"
          aria-label={`${label}: ${tasks.length} task${tasks.length === 1 ? "" : "s"}. ${summary}${more}.`}
          width={layout.width}
          height={layout.height}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          className="dag-svg"
        >
          <defs>
            <marker id={arrow} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" className="dag-arrow" />
            </marker>
          </defs>
          <g className="dag-edges">
            {layout.edges.map((e) => (
              <path key={`${e.from}>${e.to}`} d={edgePath(e.points)} className="dag-edge" markerEnd={`url(#${arrow})`} />
            ))}
          </g>
          {layout.nodes.map((n) => {
            const s = states(n.key);
            const l = look(s.status);
            const isMapped = mapped.has(n.key);
            let detail = `${l.icon} ${l.word}`;
            if (isMapped && s.instances && s.instances.size > 0) {
              let total = 0;
              for (const v of s.instances.values()) total += v;
              detail += ` · ${s.instances.get("SUCCEEDED") ?? 0}/${total}`;
            } else if (isMapped) detail += " · mapped";
            return (
              <g key={n.key} className={`dag-node st-${l.tone}${isMapped ? " mapped" : ""}`} data-task={n.key} data-state={s.status ?? ""} transform={`translate(${n.x},${n.y})`}>
                <title>{`${n.key}: ${l.word}${isMapped ? " (mapped)" : ""}`}</title>
                {isMapped && <rect x={4} y={-4} width={NODE_W} height={NODE_H} rx={7} className="dag-node-stack" />}
                <rect width={NODE_W} height={NODE_H} rx={7} className="dag-node-box" />
                <text x={10} y={19} className="dag-node-key">{clip(n.key)}</text>
                <text x={10} y={36} className="dag-node-state">{clip(detail, 26)}</text>
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption>
        <StateLegend />
      </figcaption>
    </figure>
  );
}

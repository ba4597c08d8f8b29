/**
 * A DAG task's state as the DAG views show it: a tone (the colour, from the shared palette), an
 * icon and a word, so the colour is never the only cue.
 */
import type { DagTaskState } from "../../../../generated/client/graphql";

export interface StateLook {
  tone: "ok" | "run" | "wait" | "warn" | "bad" | "muted" | "none";
  icon: string;
  word: string;
}

export const STATE_LOOK: Record<DagTaskState, StateLook> = {
  PENDING: { tone: "none", icon: "○", word: "pending" },
  QUEUED: { tone: "wait", icon: "◷", word: "queued" },
  RUNNING: { tone: "run", icon: "▶", word: "running" },
  RETRYING: { tone: "warn", icon: "↻", word: "retrying" },
  SUCCEEDED: { tone: "ok", icon: "✓", word: "succeeded" },
  FAILED: { tone: "bad", icon: "✕", word: "failed" },
  UPSTREAM_FAILED: { tone: "bad", icon: "⤓", word: "upstream failed" },
  SKIPPED: { tone: "muted", icon: "⤼", word: "skipped" },
  CANCELLED: { tone: "muted", icon: "⊘", word: "cancelled" },
};

/** The states in the legend's order (how a task moves along). */
export const STATE_ORDER: DagTaskState[] = ["PENDING", "QUEUED", "RUNNING", "RETRYING", "SUCCEEDED", "FAILED", "UPSTREAM_FAILED", "SKIPPED", "CANCELLED"];

export function look(state: string | null | undefined): StateLook {
  return (state && STATE_LOOK[state as DagTaskState]) || { tone: "none", icon: "·", word: "no run" };
}

export const ACTIVE_STATES: ReadonlySet<string> = new Set(["QUEUED", "RUNNING", "RETRYING"]);
export const TERMINAL_STATES: ReadonlySet<string> = new Set(["SUCCEEDED", "FAILED", "UPSTREAM_FAILED", "SKIPPED", "CANCELLED"]);

/** The legend: every state's swatch, icon and word. */
export function StateLegend({ only }: { only?: Iterable<string> }) {
  const shown = only ? new Set(only) : null;
  return (
    <ul className="dag-legend" aria-label="Task states">
      {STATE_ORDER.filter((s) => !shown || shown.has(s)).map((s) => {
        const l = STATE_LOOK[s];
        return (
          <li key={s}>
            <span className={`dag-swatch st-${l.tone}`} aria-hidden="true">{l.icon}</span>
            {l.word}
          </li>
        );
      })}
    </ul>
  );
}

/** The timeline's scale: where an instant falls (percent of the track) and the axis's ticks. */
export interface Scale {
  t0: number;
  t1: number;
  /** Percent of the track from the start for an instant (ms). */
  at(ms: number): number;
  ticks: Array<{ pct: number; label: string }>;
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1000);

export function offsetLabel(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return m ? `${h} h ${m} min` : `${h} h`;
}

export function makeScale(t0: number, t1: number): Scale {
  const span = Math.max(1000, t1 - t0);
  const step = STEPS.find((s) => span / s <= 8) ?? STEPS[STEPS.length - 1];
  const ticks: Scale["ticks"] = [];
  for (let o = 0; o <= span; o += step) ticks.push({ pct: (o / span) * 100, label: offsetLabel(o) });
  return { t0, t1: t0 + span, at: (ms) => Math.min(100, Math.max(0, ((ms - t0) / span) * 100)), ticks };
}

/** A bar's left and width (percent), at least a sliver so a fast task stays visible. */
export function barBox(scale: Scale, start: number, end: number): { left: string; width: string } {
  const l = scale.at(start);
  const w = Math.max(0.4, scale.at(end) - l);
  return { left: `${l}%`, width: `${Math.min(w, 100 - l)}%` };
}

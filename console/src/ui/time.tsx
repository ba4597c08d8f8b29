/** Times as the user reads them: local, with the exact instant (UTC) on hover. */
import { useEffect, useState } from "react";

const abs = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const rel = new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "short" });

export function relative(ms: number, now = Date.now()): string {
  const d = (ms - now) / 1000;
  const a = Math.abs(d);
  if (a < 45) return rel.format(Math.round(d), "second");
  if (a < 2700) return rel.format(Math.round(d / 60), "minute");
  if (a < 64800) return rel.format(Math.round(d / 3600), "hour");
  return rel.format(Math.round(d / 86400), "day");
}

/** Re-renders every `ms` so relative times stay true. */
export function useNow(ms = 15_000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function Time({ iso, mode = "absolute" }: { iso: string | null | undefined; mode?: "absolute" | "relative" }) {
  if (!iso) return <span className="muted">—</span>;
  const ms = Date.parse(iso);
  return (
    <time dateTime={iso} title={new Date(ms).toISOString()}>
      {mode === "relative" ? relative(ms) : abs.format(ms)}
    </time>
  );
}

export function duration(ms: number | null | undefined): string {
  if (ms == null) return "—";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** What the fire ledger and the next fires say, in words: outcomes, lateness, DST marks. */
import type { FireOutcome } from "../../../../generated/client/graphql";

/** The scheduler's default tolerance (DEFAULT_LATE_TOLERANCE_MS): a fire more than this after its slot was late. */
export const LATE_MS = 60_000;

/** A ledger cell's class: the API's outcome, with FIRED split into on time and late. */
export type Cell = "FIRED" | "LATE" | Exclude<FireOutcome, "FIRED">;

export const CELLS: ReadonlyArray<{ cell: Cell; label: string; help: string }> = [
  { cell: "FIRED", label: "Fired", help: "a run was made for the slot, on time" },
  { cell: "LATE", label: "Late", help: "fired more than a minute after its slot" },
  { cell: "SKIPPED_OVERLAP", label: "Skipped: overlap", help: "the overlap policy refused it (a run was still going)" },
  { cell: "SKIPPED_PAUSED", label: "Skipped: paused", help: "it came due while the job was paused" },
  { cell: "SKIPPED_DST", label: "Skipped: DST", help: "its wall time did not exist (spring forward) and the job skips DST gaps" },
  { cell: "SKIPPED_BACKLOG", label: "Skipped: backlog", help: "too many of the owner's runs were waiting to start" },
  { cell: "MISSED", label: "Missed", help: "not run under the misfire policy (outside the catch-up window, collapsed, or over the cap)" },
];

export function cellOf(f: { outcome: FireOutcome; latenessMs: number | null }): Cell {
  if (f.outcome === "FIRED") return (f.latenessMs ?? 0) > LATE_MS ? "LATE" : "FIRED";
  return f.outcome;
}

export function cellLabel(c: Cell): string {
  return CELLS.find((x) => x.cell === c)?.label ?? c;
}

const DST_TAGS: Record<string, string> = {
  GAP_SHIFTED: "moved to the end of a DST gap: its wall time does not exist that day (spring forward)",
  REPEATED_FIRST: "in a repeated hour (fall back): the first pass",
  REPEATED_SECOND: "in a repeated hour (fall back): the second pass",
};

export function dstTagText(tag: string): string {
  return DST_TAGS[tag] ?? tag.replace(/_/g, " ").toLowerCase();
}

/** The offset at the end of an ISO-8601 local time, e.g. "+02:00" in "2026-03-29T03:00:00+02:00". */
export function offsetOf(local: string): string | null {
  const m = /([+-]\d{2}:\d{2}(?::\d{2})?|Z)$/.exec(local);
  return m ? (m[1] === "Z" ? "+00:00" : m[1]!) : null;
}

/** "2026-03-29 03:00:00" from "2026-03-29T03:00:00+02:00": the wall time in the job's zone. */
export function wallOf(local: string): string {
  return local.replace(/([+-]\d{2}:\d{2}(?::\d{2})?|Z)$/, "").replace("T", " ").replace(/\.\d+$/, "");
}

export interface MarkedFire {
  at: string;
  local: string;
  dst: string | null;
  /** The zone's offset differs from the previous fire's: a DST (or other) change lies between them. */
  offsetChange: { from: string; to: string } | null;
}

/** Marks the fires after which the zone's offset changed (whether or not the API tagged them). */
export function markFires(fires: ReadonlyArray<{ at: string; local: string; dst?: string | null }>): MarkedFire[] {
  let prev: string | null = null;
  return fires.map((f) => {
    const off = offsetOf(f.local);
    const change = prev && off && off !== prev ? { from: prev, to: off } : null;
    prev = off ?? prev;
    return { at: f.at, local: f.local, dst: f.dst ?? null, offsetChange: change };
  });
}

const localFmt = new Intl.DateTimeFormat(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });

/** The instant in the browser's own zone, with the zone's short name. */
export function inYourZone(iso: string): string {
  return localFmt.format(Date.parse(iso));
}

export const YOUR_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

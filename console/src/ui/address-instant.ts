/** Reading a date-time out of the address's query string; no React, so the boot script (boot/first-query.ts) may use it. */

/**
 * A date-time typed into the address (`?from=…&to=…`) as an ISO instant, or "" when it is none.
 * Only ISO 8601 forms are read (2026-01-31, 2026-01-31T09:00, 2026-01-31T09:00:00Z, …+01:00; no
 * zone: local time; a date alone: its start in UTC, as Date.parse reads it), and a date that is not in the calendar is none: the browser's Date.parse
 * reads "1" as 2001, "Nov 28" as 2001-11-28 and 2026-02-30 as March 2nd.
 */
export function addressInstant(raw: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i.exec(raw.trim());
  if (!m) return "";
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const inCalendar = new Date(Date.UTC(year, month - 1, day));
  if (inCalendar.getUTCMonth() !== month - 1 || inCalendar.getUTCDate() !== day) return "";
  if (Number(m[4] ?? 0) > 23 || Number(m[5] ?? 0) > 59 || Number(m[6] ?? 0) > 59) return "";
  const ms = Date.parse(raw.trim().replace(" ", "T"));
  return Number.isNaN(ms) ? "" : new Date(ms).toISOString();
}

/**
 * Date-times as the API and the command line take them: RFC 3339 with a time zone
 * (`2030-01-01T09:00:00Z`, `2030-01-01T09:00:00+01:00`). What this module adds is the words for
 * one that is not: what is missing (the zone, the time, the seconds) and an example built from the
 * user's own value, so the answer to `"2030-01-01T09:00:00"` shows `"2030-01-01T09:00:00Z"`.
 */

/** What every refusal ends with. */
export const DATE_TIME_EXAMPLES = `a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00"`;

const NO_ZONE = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const NO_SECONDS = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})([Zz]|[+-]\d{2}:\d{2})$/;
const SHAPED = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Why `value` (refused as a date-time) is not one, with an example of what is. */
export function badDateTime(value: unknown): string {
  if (typeof value !== "string") return `expected a date-time string, got ${value === null ? "null" : typeof value}; ${DATE_TIME_EXAMPLES}`;
  const shown = JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  const noZone = NO_ZONE.exec(value);
  if (noZone) {
    const at = `${noZone[1]}T${noZone[2]}${noZone[3] ?? ":00"}`;
    return `${shown} has no time zone: add Z for UTC or an offset, such as "${at}Z" or "${at}+01:00"`;
  }
  if (DATE_ONLY.test(value)) return `${shown} has no time: give one with a time zone, such as "${value}T00:00:00Z"`;
  const noSeconds = NO_SECONDS.exec(value);
  if (noSeconds) return `${shown} has no seconds: write them, such as "${noSeconds[1]}T${noSeconds[2]}:00${noSeconds[3]}"`;
  if (SHAPED.test(value)) return `${shown} is not a valid date or time (a month, day, hour, minute or offset out of range); ${DATE_TIME_EXAMPLES}`;
  return `${shown} is not a date-time; ${DATE_TIME_EXAMPLES}`;
}

/**
 * A date-time typed on the command line, in epoch ms, or why it is not one. Without
 * a zone it is refused, as the API refuses it, rather than read in this machine's local time.
 */
export function parseDateTimeText(value: string): { at: number } | { error: string } {
  const v = value.trim();
  if (NO_ZONE.test(v) || DATE_ONLY.test(v)) return { error: badDateTime(v) };
  const at = Date.parse(v);
  return Number.isNaN(at) ? { error: badDateTime(v) } : { at };
}

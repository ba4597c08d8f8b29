/**
 * Which time-zone names a schedule takes: IANA tz database names of the `Area/Location` form
 * (`Europe/Berlin`, `America/Los_Angeles`, also the tz database's older links such as
 * `US/Pacific` and `Etc/GMT+8`) and `UTC` / `GMT`. ICU also accepts abbreviations and other
 * legacy ids (`PST`, `EST`, `CET`, `EST5EDT`, `Japan`, `SystemV/PST8`); those are refused, with
 * the zone to use instead: an abbreviation names no place (`EST` is a fixed UTC-5 without daylight
 * saving time where New York has it, `BST` is Bangladesh's for ICU, not British Summer Time, `IST`
 * three different zones), so the schedule would not follow the rules its author meant.
 */

/** The areas of the tz database's names (and of its backward-compatible links). */
const AREAS = new Set(["Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific", "Etc", "US", "Canada", "Mexico", "Brazil", "Chile"]);

/** The two names without an area taken as they are (in any letter case). */
const PLAIN = new Set(["utc", "gmt"]);

/** What people write for a zone, and the IANA name meant most of the time. */
const SUGGESTIONS: Readonly<Record<string, string>> = {
  PST: "America/Los_Angeles", PDT: "America/Los_Angeles", PT: "America/Los_Angeles", PST8PDT: "America/Los_Angeles",
  MST: "America/Denver", MDT: "America/Denver", MT: "America/Denver", MST7MDT: "America/Denver",
  CST: "America/Chicago", CDT: "America/Chicago", CT: "America/Chicago", CST6CDT: "America/Chicago",
  EST: "America/New_York", EDT: "America/New_York", ET: "America/New_York", EST5EDT: "America/New_York",
  AKST: "America/Anchorage", AKDT: "America/Anchorage", HST: "Pacific/Honolulu",
  BST: "Europe/London", WET: "Europe/Lisbon", WEST: "Europe/Lisbon",
  CET: "Europe/Berlin", CEST: "Europe/Berlin", MET: "Europe/Berlin", MEST: "Europe/Berlin",
  EET: "Europe/Athens", EEST: "Europe/Athens", MSK: "Europe/Moscow",
  IST: "Asia/Kolkata", JST: "Asia/Tokyo", KST: "Asia/Seoul", HKT: "Asia/Hong_Kong", SGT: "Asia/Singapore",
  AEST: "Australia/Sydney", AEDT: "Australia/Sydney", ACST: "Australia/Adelaide", AWST: "Australia/Perth",
  NZST: "Pacific/Auckland", NZDT: "Pacific/Auckland",
  UCT: "UTC", ZULU: "UTC", UNIVERSAL: "UTC", GREENWICH: "UTC", GMT0: "UTC",
};

/**
 * Why `name` is not a zone name a schedule takes, or null when it is of the IANA form. `resolve`
 * maps a name ICU knows to its zone (null when ICU does not know it either).
 */
export function zoneNameProblem(name: string, resolve: (name: string) => string | null): string | null {
  const slash = name.indexOf("/");
  if (slash < 0 ? PLAIN.has(name.toLowerCase()) : AREAS.has(areaOf(name.slice(0, slash)))) return null;
  const resolved = resolve(name);
  const instead = SUGGESTIONS[name.toUpperCase()] ?? (resolved && resolved.includes("/") && AREAS.has(areaOf(resolved.split("/")[0]!)) ? resolved : null);
  if (!instead && !resolved) return null; // unknown to ICU as well: the caller's "unknown IANA time zone" says so
  const what = slash < 0 && /^[A-Z]{2,5}$/.test(name) ? "a time zone abbreviation" : "a legacy time zone id";
  if (instead === "UTC") return `"${name}" is ${what}, not an IANA time zone name: use "UTC"`;
  const example = instead ? `"${instead}"` : `"Europe/Berlin" or "America/New_York"`;
  return `"${name}" is ${what}, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as ${example}, or "UTC"`;
}

/** An area in its usual spelling, for a name typed in another case (`america/new_york`). */
function areaOf(area: string): string {
  for (const a of AREAS) if (a.toLowerCase() === area.toLowerCase()) return a;
  return area;
}

/** Which time-zone names a schedule takes (IANA only), and the words for a date-time that is not one (issue #30). */
import { describe, expect, it } from "vitest";
import { badDateTime, parseDateTimeText } from "../../src/timing/instant.js";
import { canonicalTimeZone } from "../../src/timing/zones.js";

describe("time-zone names", () => {
  it.each(["Europe/Berlin", "America/Los_Angeles", "US/Pacific", "Etc/GMT+8", "Asia/Kolkata", "Europe/Kyiv"])("takes %s", (z) => {
    expect(canonicalTimeZone(z)).toBe(z);
  });

  it("takes UTC and GMT in any case, as UTC, and repairs an IANA name's case", () => {
    expect([canonicalTimeZone("utc"), canonicalTimeZone("GMT"), canonicalTimeZone("america/new_york")]).toEqual(["UTC", "UTC", "America/New_York"]);
  });

  it.each([
    ["PST", "America/Los_Angeles"],
    ["EST", "America/New_York"],
    ["CET", "Europe/Berlin"],
    ["CEST", "Europe/Berlin"],
    ["BST", "Europe/London"],
    ["IST", "Asia/Kolkata"],
  ])("refuses the abbreviation %s, naming %s", (z, instead) => {
    expect(() => canonicalTimeZone(z)).toThrow(`timezone: "${z}" is a time zone abbreviation, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "${instead}", or "UTC"`);
  });

  it("refuses ICU's other legacy ids, and points UTC's aliases to UTC", () => {
    expect(() => canonicalTimeZone("EST5EDT")).toThrow('"EST5EDT" is a legacy time zone id, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "America/New_York"');
    expect(() => canonicalTimeZone("Japan")).toThrow('such as "Asia/Tokyo"');
    expect(() => canonicalTimeZone("SystemV/PST8")).toThrow('"SystemV/PST8" is a legacy time zone id, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "Europe/Berlin" or "America/New_York", or "UTC"');
    expect(() => canonicalTimeZone("Zulu")).toThrow('timezone: "Zulu" is a legacy time zone id, not an IANA time zone name: use "UTC"');
    expect(() => canonicalTimeZone("Mars/Base")).toThrow('unknown IANA time zone "Mars/Base"');
  });
});

describe("a date-time that is not one", () => {
  it.each([
    ["2030-01-01T09:00:00", '"2030-01-01T09:00:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"'],
    ["2030-01-01T09:00", '"2030-01-01T09:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"'],
    ["2030-01-01", '"2030-01-01" has no time: give one with a time zone, such as "2030-01-01T00:00:00Z"'],
    ["2030-01-01T09:00Z", '"2030-01-01T09:00Z" has no seconds: write them, such as "2030-01-01T09:00:00Z"'],
    ["2030-02-30T09:00:00Z", '"2030-02-30T09:00:00Z" is not a valid date or time (a month, day, hour, minute or offset out of range); a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00"'],
    ["tomorrow", '"tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00"'],
  ])("%s", (value, why) => {
    expect(badDateTime(value)).toBe(why);
  });

  it("the command line refuses one without a zone rather than read it in local time", () => {
    expect(parseDateTimeText("2030-01-01T09:00:00")).toEqual({ error: badDateTime("2030-01-01T09:00:00") });
    expect(parseDateTimeText("2030-01-01T09:00:00+01:00")).toEqual({ at: Date.UTC(2030, 0, 1, 8) });
  });
});

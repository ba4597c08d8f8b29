/**
 * A cron expression in words for the common shapes ("every 5 minutes", "daily at 03:00",
 * "at 09:30 on weekdays"), or null when the shape is not one of them (show the expression then).
 * Five fields (minute hour day-of-month month day-of-week), or six with seconds first (seconds
 * must then be 0). Only what is certain is said; anything unusual answers null.
 */
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const NUM = /^\d{1,2}$/;

const two = (n: string) => n.padStart(2, "0");

function dayList(dow: string): string | null {
  if (dow === "1-5") return "weekdays";
  if (dow === "0,6" || dow === "6,0" || dow === "6,7") return "weekends";
  const out: string[] = [];
  for (const part of dow.split(",")) {
    if (!NUM.test(part) || Number(part) > 7) return null;
    out.push(DAYS[Number(part)]);
  }
  return out.join(", ");
}

const MACROS: Record<string, string> = {
  "@hourly": "every hour, on the hour",
  "@daily": "daily at 00:00",
  "@midnight": "daily at 00:00",
  "@weekly": "at 00:00 on Sun",
  "@monthly": "at 00:00 on day 1 of each month",
  "@yearly": "at 00:00 on 1 January",
  "@annually": "at 00:00 on 1 January",
};

export function cronInWords(cron: string): string | null {
  const macro = MACROS[cron.trim().toLowerCase()];
  if (macro) return macro;
  let f = cron.trim().split(/\s+/);
  if (f.length === 6) {
    if (f[0] !== "0") return null;
    f = f.slice(1);
  }
  if (f.length !== 5) return null;
  const [min, hour, dom, mon, dow] = f;
  if (mon !== "*") return null;
  const everyMin = /^\*\/(\d{1,2})$/.exec(min);
  const everyHour = /^\*\/(\d{1,2})$/.exec(hour);
  if (dom === "*" && dow === "*") {
    if (min === "*" && hour === "*") return "every minute";
    if (everyMin && hour === "*") return everyMin[1] === "1" ? "every minute" : `every ${Number(everyMin[1])} minutes`;
    if (NUM.test(min) && hour === "*") return min === "0" ? "every hour, on the hour" : `every hour at ${two(min)} past`;
    if (NUM.test(min) && everyHour) return `every ${Number(everyHour[1])} hours at minute ${Number(min)}`;
    if (NUM.test(min) && NUM.test(hour)) return `daily at ${two(hour)}:${two(min)}`;
    return null;
  }
  if (!NUM.test(min) || !NUM.test(hour)) return null;
  const at = `${two(hour)}:${two(min)}`;
  if (dom === "*") {
    const days = dayList(dow);
    return days ? `at ${at} on ${days}` : null;
  }
  if (dow === "*" && NUM.test(dom)) return `at ${at} on day ${Number(dom)} of each month`;
  return null;
}

/** A schedule as the console shows it: cron in words where it can, the API's description otherwise. */
export function scheduleInWords(s: { kind: string; cron?: string | null; timezone: string; description: string }): string {
  if (s.kind === "CRON" && s.cron) {
    const words = cronInWords(s.cron);
    if (words) return `${words} (${s.timezone})`;
  }
  return s.description;
}

/**
 * Numbers that people type as text (settings such as KAIROS_PORT, the command line's flags) are
 * read as plain decimal here, and only here. JavaScript's Number() also takes `1e3`, `0x10`,
 * `0b11`, `0o17`, `Infinity` and `" "` (0): a setting of `0x10` silently became port 16, and a
 * blank one port 0. Digits with an optional sign, and for a number that may have a fraction a
 * decimal point, are the whole grammar; anything else is refused saying what it was read as.
 */

/** What `text` would have been to Number(), for a message: why it is not plain decimal. */
function notDecimal(text: string, whole: boolean): string {
  const n = Number(text);
  const as = (what: string) => `${what}${Number.isFinite(n) && (!whole || Number.isInteger(n)) ? ` (write ${n})` : ""}; only decimal digits are read`;
  if (text === "") return "is blank";
  if (/^[+-]?0x/i.test(text)) return as("is hexadecimal");
  if (/^[+-]?0b/i.test(text)) return as("is binary");
  if (/^[+-]?0o/i.test(text)) return as("is octal");
  if (/^[+-]?(\d+\.?\d*|\.\d+)e/i.test(text)) return as("has an exponent");
  if (/^[+-]?infinity$/i.test(text)) return as("is not a finite number");
  if (/^[+-]?(\d+\.\d*|\.\d+)$/.test(text)) return "has a fraction";
  return "is not a number";
}

export type DecimalRead = { value: number } | { problem: string };

/**
 * `text` (surrounding whitespace ignored) as a decimal number: digits, an optional sign, and when
 * `whole` is false a decimal point; `problem` says why not (`has an exponent (write 1000); only
 * decimal digits are read`, `is hexadecimal (write 16); …`, `has a fraction`, `is blank`, `is not a
 * number`).
 */
export function readDecimal(text: string, whole: boolean): DecimalRead {
  const t = text.trim();
  const ok = whole ? /^[+-]?\d+$/.test(t) : /^[+-]?(\d+\.?\d*|\.\d+)$/.test(t);
  return ok ? { value: Number(t) } : { problem: notDecimal(t, whole) };
}

/**
 * `text` as a whole number from `min` to `max`, or the problem in words beginning with the text
 * itself: `"1e3" must be a whole number from 0 to 65535: it has an exponent (write 1000); only
 * decimal digits are read`, `"99999" must be a whole number from 0 to 65535`. `alternative` names
 * what else the caller takes (`off`): `… from 1 to 100, or off`.
 */
export function readWholeNumber(text: string, min: number, max: number, alternative?: string): DecimalRead {
  const or = alternative ? `, or ${alternative}` : "";
  const read = readDecimal(text, true);
  const allowed = `"${text}" must be a whole number from ${min} to ${max}${or}`;
  if ("problem" in read) return { problem: `${allowed}: it ${read.problem}` };
  if (!Number.isSafeInteger(read.value) || read.value < min || read.value > max) return { problem: allowed };
  return read;
}

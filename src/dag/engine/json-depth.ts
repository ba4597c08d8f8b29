/**
 * How deeply JSON nests, measured without recursion: params and results nested thousands of
 * levels deep overflow the stack of every recursive reader (JSON.stringify, the idempotency
 * fingerprint, the GraphQL answer), so they are refused up front at MAX_JSON_DEPTH.
 */

/** Deepest nesting of objects and arrays kept in params and results. */
export const MAX_JSON_DEPTH = 100;

/** The nesting depth of a parsed JSON value (a scalar is 0, `[]` and `{}` are 1), stopping once past `limit`. */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    const d = depth + 1;
    if (d > deepest) deepest = d;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d]);
  }
  return deepest;
}

/** The nesting depth of JSON text (brackets outside strings), for text not parsed yet. */
export function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * ANSI escape sequences in program output, made safe to show: SGR sequences (ESC [ … m) become
 * styled segments of plain text; every other escape or control sequence (cursor moves, OSC titles
 * and links, bells, backspaces) is dropped. The output is text only: a segment is rendered as a
 * React text node with classes, never as HTML.
 *
 * Streaming: `parseAnsi(text, state)` takes the state the previous chunk left (current style, and
 * an escape cut at the chunk's end), so a sequence split across chunks is understood.
 *
 * Colours are the 16 terminal colours (classes `ansi-fg-0` … `ansi-fg-15`, `ansi-bg-*`); 256-colour
 * and 24-bit colours map to the nearest of them, so the stylesheet stays a fixed set of classes
 * (no style attributes: the console's CSP allows none).
 */

export interface AnsiStyle {
  /** 0–15, or null for the default colour. */
  fg: number | null;
  bg: number | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
  strike: boolean;
}

export interface AnsiSegment extends AnsiStyle {
  text: string;
}

export interface AnsiState {
  style: AnsiStyle;
  /** The start of an escape sequence cut by the end of the previous chunk. */
  pending: string;
}

export const PLAIN: AnsiStyle = Object.freeze({ fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false, strike: false });

export function initialAnsiState(): AnsiState {
  return { style: PLAIN, pending: "" };
}

/** The longest escape sequence kept across chunks; a longer unterminated one is dropped. */
const MAX_PENDING = 256;

/** The 16 colours' RGB, for mapping 256-colour and 24-bit colours to the nearest. */
const BASE16: Array<[number, number, number]> = [
  [0, 0, 0], [205, 0, 0], [0, 205, 0], [205, 205, 0], [0, 0, 238], [205, 0, 205], [0, 205, 205], [229, 229, 229],
  [127, 127, 127], [255, 0, 0], [0, 255, 0], [255, 255, 0], [92, 92, 255], [255, 0, 255], [0, 255, 255], [255, 255, 255],
];

export function nearest16(r: number, g: number, b: number): number {
  let best = 0;
  let bestD = Infinity;
  BASE16.forEach(([cr, cg, cb], i) => {
    const d = (r - cr) ** 2 + (g - cg) ** 2 + (b - cb) ** 2;
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  });
  return best;
}

/** A 256-colour index as one of the 16. */
export function from256(n: number): number {
  if (n < 16) return n;
  if (n < 232) {
    const v = n - 16;
    const level = (x: number) => (x === 0 ? 0 : 55 + x * 40);
    return nearest16(level(Math.floor(v / 36)), level(Math.floor(v / 6) % 6), level(v % 6));
  }
  const grey = 8 + (n - 232) * 10;
  return nearest16(grey, grey, grey);
}

const clampByte = (n: number | undefined) => Math.max(0, Math.min(255, n ?? 0));

/** Applies one SGR parameter list to a style. */
export function applySgr(style: AnsiStyle, params: number[]): AnsiStyle {
  const s: AnsiStyle = { ...style };
  if (params.length === 0) params = [0];
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p === 0) Object.assign(s, PLAIN);
    else if (p === 1) s.bold = true;
    else if (p === 2) s.dim = true;
    else if (p === 3) s.italic = true;
    else if (p === 4) s.underline = true;
    else if (p === 7) s.inverse = true;
    else if (p === 9) s.strike = true;
    else if (p === 21 || p === 22) s.bold = s.dim = false;
    else if (p === 23) s.italic = false;
    else if (p === 24) s.underline = false;
    else if (p === 27) s.inverse = false;
    else if (p === 29) s.strike = false;
    else if (p >= 30 && p <= 37) s.fg = p - 30;
    else if (p === 39) s.fg = null;
    else if (p >= 40 && p <= 47) s.bg = p - 40;
    else if (p === 49) s.bg = null;
    else if (p >= 90 && p <= 97) s.fg = p - 90 + 8;
    else if (p >= 100 && p <= 107) s.bg = p - 100 + 8;
    else if (p === 38 || p === 48) {
      // 38;5;n (256 colours) or 38;2;r;g;b (24-bit); the same for the background with 48.
      let c: number | null = null;
      if (params[i + 1] === 5) {
        c = from256(clampByte(params[i + 2]));
        i += 2;
      } else if (params[i + 1] === 2) {
        c = nearest16(clampByte(params[i + 2]), clampByte(params[i + 3]), clampByte(params[i + 4]));
        i += 4;
      } else break; // malformed: ignore the rest, as terminals do
      if (p === 38) s.fg = c;
      else s.bg = c;
    }
    // Anything else (blink, fonts, overline…) is ignored.
  }
  return s;
}

function sameStyle(a: AnsiStyle, b: AnsiStyle): boolean {
  return a.fg === b.fg && a.bg === b.bg && a.bold === b.bold && a.dim === b.dim && a.italic === b.italic && a.underline === b.underline && a.inverse === b.inverse && a.strike === b.strike;
}

/**
 * Where the escape sequence starting at `i` (text[i] === ESC) ends (exclusive), and the SGR
 * parameters if it is one; `end: -1` when the text ends inside it.
 */
function escapeAt(text: string, i: number): { end: number; sgr: number[] | null } {
  const next = text[i + 1];
  if (next === undefined) return { end: -1, sgr: null };
  if (next === "[") {
    // CSI: parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, one final byte 0x40–0x7E.
    let j = i + 2;
    while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x3f) j++;
    if (j >= text.length) return { end: -1, sgr: null };
    const final = text.charCodeAt(j);
    if (final < 0x40 || final > 0x7e) return { end: j, sgr: null }; // broken: drop what we saw
    const body = text.slice(i + 2, j);
    if (text[j] === "m" && /^[\d;:]*$/.test(body)) {
      const sgr = body === "" ? [] : body.split(/[;:]/).map((x) => (x === "" ? 0 : Number.parseInt(x, 10)));
      return { end: j + 1, sgr };
    }
    return { end: j + 1, sgr: null };
  }
  if (next === "]" || next === "P" || next === "^" || next === "_" || next === "X") {
    // OSC / DCS / PM / APC / SOS: up to BEL or ST (ESC \).
    for (let j = i + 2; j < text.length; j++) {
      if (text[j] === "\u0007") return { end: j + 1, sgr: null };
      if (text[j] === "\u001b") {
        if (j + 1 >= text.length) return { end: -1, sgr: null };
        if (text[j + 1] === "\\") return { end: j + 2, sgr: null };
      }
    }
    return { end: -1, sgr: null };
  }
  // ESC ( B and friends: one intermediate byte then a final one; else a two-byte sequence.
  const c = next.charCodeAt(0);
  if (c >= 0x20 && c <= 0x2f) return text.length > i + 2 ? { end: i + 3, sgr: null } : { end: -1, sgr: null };
  return { end: i + 2, sgr: null };
}

/** Control characters shown as nothing: C0 except tab and newline, DEL, and C1. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f]/g;

/**
 * Splits `text` into styled segments, continuing from `state`. Returns the segments (adjacent ones
 * of the same style merged; empty ones left out) and the state for the next chunk.
 */
export function parseAnsi(text: string, state: AnsiState = initialAnsiState()): { segments: AnsiSegment[]; state: AnsiState } {
  let input = state.pending + text;
  let style = state.style;
  let pending = "";
  const segments: AnsiSegment[] = [];
  const emit = (raw: string) => {
    // A carriage return before a newline is the line end; elsewhere it would overwrite the line: drop it.
    const t = raw.replace(CONTROLS, "");
    if (t === "") return;
    const last = segments[segments.length - 1];
    if (last && sameStyle(last, style)) last.text += t;
    else segments.push({ ...style, text: t });
  };
  let from = 0;
  let i = input.indexOf("\u001b");
  while (i !== -1) {
    emit(input.slice(from, i));
    const { end, sgr } = escapeAt(input, i);
    if (end === -1) {
      const rest = input.slice(i);
      pending = rest.length <= MAX_PENDING ? rest : "";
      from = input.length;
      break;
    }
    if (sgr) style = applySgr(style, sgr);
    from = end;
    i = input.indexOf("\u001b", from);
  }
  if (from < input.length) emit(input.slice(from));
  input = "";
  return { segments, state: { style, pending } };
}

/** The classes a segment is rendered with (see views' log styles). */
export function ansiClasses(s: AnsiStyle): string {
  let fg = s.fg;
  let bg = s.bg;
  const out: string[] = [];
  if (s.inverse) {
    [fg, bg] = [bg, fg];
    if (fg === null) out.push("ansi-fg-inverse");
    if (bg === null) out.push("ansi-bg-inverse");
  }
  if (fg !== null) out.push(`ansi-fg-${fg}`);
  if (bg !== null) out.push(`ansi-bg-${bg}`);
  if (s.bold) out.push("ansi-bold");
  if (s.dim) out.push("ansi-dim");
  if (s.italic) out.push("ansi-italic");
  if (s.underline) out.push("ansi-underline");
  if (s.strike) out.push("ansi-strike");
  return out.join(" ");
}

/** The text without any escape sequence (for copying or downloading as plain text). */
export function stripAnsi(text: string): string {
  return parseAnsi(text).segments.map((s) => s.text).join("");
}

/** The console's ANSI parser (console/src/ui/ansi.ts): a pure function, tested in node. */
import { describe, expect, it } from "vitest";
import { ansiClasses, from256, initialAnsiState, parseAnsi, stripAnsi, type AnsiSegment } from "../src/ui/ansi";

const texts = (segs: AnsiSegment[]) => segs.map((s) => s.text);

describe("console: ANSI SGR parser", () => {
  it("plain text is one unstyled segment, HTML and all, untouched", () => {
    const { segments } = parseAnsi("<b>bold</b><script>alert(3)</script>\n");
    expect(segments).toEqual([{ text: "<b>bold</b><script>alert(3)</script>\n", fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false, strike: false }]);
  });

  it("colours and attributes start, combine and reset", () => {
    const { segments } = parseAnsi("a\u001b[31mred\u001b[1;44mboth\u001b[22mnot-bold\u001b[0mplain\u001b[92mbright\u001b[39mdefault");
    expect(texts(segments)).toEqual(["a", "red", "both", "not-bold", "plain", "bright", "default"]);
    expect(segments[1]).toMatchObject({ fg: 1, bold: false });
    expect(segments[2]).toMatchObject({ fg: 1, bg: 4, bold: true });
    expect(segments[3]).toMatchObject({ fg: 1, bg: 4, bold: false });
    expect(segments[4]).toMatchObject({ fg: null, bg: null });
    expect(segments[5]).toMatchObject({ fg: 10 });
    expect(segments[6]).toMatchObject({ fg: null });
  });

  it("ESC[m resets like ESC[0m, and an empty parameter counts as 0", () => {
    const { segments } = parseAnsi("\u001b[1;31mx\u001b[my\u001b[1;31mz\u001b[;1mw");
    expect(segments.map((s) => [s.text, s.bold, s.fg])).toEqual([["x", true, 1], ["y", false, null], ["z", true, 1], ["w", true, null]]);
  });

  it("256-colour and 24-bit colours map to the nearest of the 16", () => {
    expect(from256(9)).toBe(9);
    expect(from256(196)).toBe(9); // bright red in the cube
    expect(from256(232)).toBe(0); // darkest grey
    expect(from256(255)).toBe(7); // lightest grey (229)
    const { segments } = parseAnsi("\u001b[38;5;196ma\u001b[48;2;0;0;250mb\u001b[38:2:0:255:0mc");
    expect(segments.map((s) => [s.text, s.fg, s.bg])).toEqual([["a", 9, null], ["b", 9, 4], ["c", 10, 4]]);
  });

  it("drops cursor moves, erases, OSC titles and links, bells, backspaces and carriage returns", () => {
    const raw = "\u001b[2J\u001b[H\u001b]0;title\u0007x\u001b]8;;http://evil\u001b\\link\u001b]8;;\u001b\\\u001b[?25l\u0008y\u0007\r\nz\u001b(B\u001b=end";
    expect(stripAnsi(raw)).toBe("xlinky\nzend");
  });

  it("an escape split across chunks is understood from the state the first chunk left", () => {
    const a = parseAnsi("one\u001b[3", initialAnsiState());
    expect(texts(a.segments)).toEqual(["one"]);
    expect(a.state.pending).toBe("\u001b[3");
    const b = parseAnsi("2mgreen\u001b", a.state);
    expect(b.segments).toHaveLength(1);
    expect(b.segments[0]).toMatchObject({ text: "green", fg: 2 });
    const c = parseAnsi("[0mplain", b.state);
    expect(c.segments[0]).toMatchObject({ text: "plain", fg: null });
    // The style carries over chunks too.
    const d = parseAnsi("still", parseAnsi("\u001b[35m", initialAnsiState()).state);
    expect(d.segments[0]).toMatchObject({ text: "still", fg: 5 });
  });

  it("an unterminated escape longer than the cap is dropped, not held for ever", () => {
    const r = parseAnsi(`\u001b]${"x".repeat(1000)}`);
    expect(r.segments).toEqual([]);
    expect(r.state.pending).toBe("");
  });

  it("classes name the colours and attributes, and inverse swaps them", () => {
    const [s] = parseAnsi("\u001b[1;4;31;42mx").segments;
    expect(ansiClasses(s!).split(" ").sort()).toEqual(["ansi-bg-2", "ansi-bold", "ansi-fg-1", "ansi-underline"]);
    const [inv] = parseAnsi("\u001b[7;33mx").segments;
    expect(ansiClasses(inv!).split(" ").sort()).toEqual(["ansi-bg-3", "ansi-fg-inverse"]);
    expect(ansiClasses(parseAnsi("x").segments[0]!)).toBe("");
  });
});

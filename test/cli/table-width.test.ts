/**
 * The command line's tables (src/cli/output.ts) line up on a terminal whatever the cells hold: a
 * column is as wide as its widest cell counted in terminal columns (East Asian Wide and Fullwidth
 * characters and emoji take two, combining marks none, colour codes none), not in code points.
 */
import { describe, expect, it } from "vitest";
import stringWidth from "string-width";
import { displayWidth, table } from "../../src/cli/output.js";

/** Where each column after the first starts on each line, in terminal columns. */
function columnStarts(text: string, headers: string[]): number[][] {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => {
      const cells = line.split(/ {3,}/);
      expect(cells).toHaveLength(headers.length);
      const starts: number[] = [];
      let at = 0;
      for (const cell of cells.slice(0, -1)) {
        const rest = line.slice(line.indexOf(cell, at) + cell.length);
        const gap = rest.length - rest.trimStart().length;
        at = line.indexOf(cell, at) + cell.length + gap;
        starts.push(stringWidth(line.slice(0, at)));
      }
      return starts;
    });
}

describe("kairos tables", () => {
  it("counts display width: wide characters two columns, combining marks none", () => {
    expect(displayWidth("日本語ジョブ")).toBe(12);
    expect(displayWidth("ＡＢ")).toBe(4);
    expect(displayWidth("émoji-😀-job")).toBe(12);
    expect(displayWidth("e\u0301")).toBe(1); // e + COMBINING ACUTE ACCENT
    expect(displayWidth("👩‍👩‍👧")).toBe(2); // one family, joined by ZWJ
    expect(displayWidth("\u001b[31mFAILED\u001b[0m")).toBe(6);
  });

  it("lines up columns after a job named in Japanese, with an emoji, or with combining marks", () => {
    const headers = ["NAME", "STATUS", "ID"];
    const rows = [
      ["plain-job", "ACTIVE", "6b0b172d0b7896a9fc4d2147"],
      ["日本語ジョブ", "ACTIVE", "6b0b172d0b7896a9fc4d2145"],
      ["émoji-😀-job", "\u001b[32mACTIVE\u001b[0m", "6b0b172d0b7896a9fc4d214a"],
      ["cafe\u0301-job", "PAUSED", "6b0b172d0b7896a9fc4d214b"],
    ];
    const text = table(headers, rows);
    const starts = columnStarts(text, headers);
    // Every line's STATUS and ID columns start at the same terminal column.
    for (const s of starts) expect(s).toEqual(starts[0]);
    // The NAME column is as wide as its widest cell (12 columns) plus the three-space gap.
    expect(starts[0]![0]).toBe(12 + 3);
  });
});

/**
 * A run log as lines of styled text, built from chunks as they arrive. It keeps only the last
 * `maxLines` lines (a chatty run must not hang the tab: the rest is in the download) and cuts
 * very long lines. Line objects are immutable once complete, so React re-renders only the last,
 * open line when a chunk extends it.
 */
import { ansiClasses, initialAnsiState, parseAnsi, type AnsiState } from "../../ui/ansi";

export type LogStreamName = "STDOUT" | "STDERR" | "SYSTEM";

export interface LogSpan {
  text: string;
  /** Class names (ANSI style and stream); "" for plain output. */
  cls: string;
}

export interface LogLine {
  /** Stable key: the line's number in the log as shown (0-based, counting dropped lines). */
  n: number;
  spans: LogSpan[];
}

export const MAX_LINES = 5_000;
/** A line longer than this is shown as several. */
export const MAX_LINE_CHARS = 4_000;

const streamClass: Record<LogStreamName, string> = { STDOUT: "", STDERR: "log-stderr", SYSTEM: "log-system" };

export class LogBuffer {
  /** Complete lines, then the open one (last). */
  private lines: LogLine[] = [];
  private open: LogSpan[] = [];
  private openChars = 0;
  private next = 0;
  /** Lines dropped from the top to stay under maxLines. */
  dropped = 0;
  private ansi = new Map<LogStreamName, AnsiState>();

  constructor(private readonly maxLines = MAX_LINES) {}

  append(data: string, stream: LogStreamName): void {
    const before = this.ansi.get(stream) ?? initialAnsiState();
    const { segments, state } = parseAnsi(data, before);
    this.ansi.set(stream, state);
    const base = streamClass[stream];
    for (const seg of segments) {
      const cls = [base, ansiClasses(seg)].filter(Boolean).join(" ");
      const parts = seg.text.split("\n");
      parts.forEach((part, i) => {
        if (i > 0) this.closeLine();
        this.addText(part, cls);
      });
    }
    this.trim();
  }

  private addText(text: string, cls: string): void {
    while (text.length > 0) {
      const room = MAX_LINE_CHARS - this.openChars;
      if (room <= 0) {
        this.closeLine();
        continue;
      }
      const piece = text.slice(0, room);
      text = text.slice(room);
      const last = this.open[this.open.length - 1];
      if (last && last.cls === cls) this.open[this.open.length - 1] = { text: last.text + piece, cls };
      else this.open.push({ text: piece, cls });
      this.openChars += piece.length;
    }
  }

  private closeLine(): void {
    this.lines.push({ n: this.next++, spans: this.open });
    this.open = [];
    this.openChars = 0;
  }

  private trim(): void {
    const over = this.lines.length + 1 - this.maxLines;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }

  /** The lines to render: the complete ones and the open one (if it has text). */
  snapshot(): LogLine[] {
    const out = this.lines.slice();
    if (this.open.length > 0) out.push({ n: this.next, spans: this.open.slice() });
    return out;
  }

  /** Every shown line as plain text (for tests and copying). */
  text(): string {
    return this.snapshot().map((l) => l.spans.map((s) => s.text).join("")).join("\n");
  }
}

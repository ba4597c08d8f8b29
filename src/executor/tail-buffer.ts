/**
 * The last bytes a run wrote, stdout and stderr in the order they came: the run's `outputTail`.
 * The two streams are interleaved only between whole UTF-8 characters: a chunk that ends inside a
 * character keeps those bytes back until its own stream's next chunk completes it. Otherwise a
 * character cut between two reads of stdout, with a stderr chunk read in between, was decoded as
 * the stderr bytes and stdout's rest together: "€" (E2 82 | AC) around an incomplete "😬" on
 * stderr (F0 9F 98) showed "�😬", a character neither stream wrote.
 */
export type OutputStream = "stdout" | "stderr";

/** How many bytes at the end of `b` begin a UTF-8 character that `b` does not finish (0–3). */
export function unfinishedUtf8(b: Buffer): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const needs = byte >= 0xf0 && byte <= 0xf7 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}

/** Keeps the last `cap` bytes written to it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Each stream's bytes of a character not finished yet. */
  private readonly held: Record<OutputStream, Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
  total = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Buffer, stream: OutputStream = "stdout"): void {
    this.total += chunk.length;
    const joined = this.held[stream].length > 0 ? Buffer.concat([this.held[stream], chunk]) : chunk;
    const keep = unfinishedUtf8(joined);
    this.held[stream] = Buffer.from(joined.subarray(joined.length - keep));
    this.append(joined.subarray(0, joined.length - keep));
  }

  private append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0]!.length >= this.cap) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(): string {
    // What a stream left unfinished when it ended is shown as it is (U+FFFD), after the rest.
    const all = Buffer.concat([...this.chunks, this.held.stdout, this.held.stderr]);
    const tail = all.length > this.cap ? all.subarray(all.length - this.cap) : all;
    // A cut may land inside a multi-byte character; drop the partial lead bytes.
    let start = 0;
    while (start < tail.length && start < 4 && (tail[start]! & 0xc0) === 0x80) start++;
    return tail.subarray(start).toString("utf8");
  }
}

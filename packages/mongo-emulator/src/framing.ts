/**
 * Splitting a connection's byte stream into whole wire messages. Pure (no socket), so the
 * boundaries can be tested with any split of the stream.
 */
import { messageLength } from "./wire.js";

/**
 * Collects the chunks of a stream and hands out complete messages. A large message (an
 * insertMany of 1,000 documents is ~1.5 MB) arrives in many chunks: they are kept as a list and
 * joined once, when the message is complete, rather than re-joined at every chunk, which costs
 * time quadratic in the message's size.
 */
export class MessageFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Declared length of the message the pending bytes begin (0: fewer than 4 bytes held). */
  private need = 0;

  /**
   * The messages completed by `chunk` (each a view of its whole frame, header included), in
   * order. Throws ProtocolError on an invalid declared length; the stream is then unusable.
   */
  push(chunk: Buffer): Buffer[] {
    let buf = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      if (this.need === 0 && this.pendingBytes >= 4) {
        const head = this.pending[0].length >= 4 ? this.pending[0] : Buffer.concat(this.pending, 4);
        this.need = messageLength(head, 0);
      }
      if (this.need === 0 || this.pendingBytes < this.need) return [];
      buf = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
      this.need = 0;
    }
    const out: Buffer[] = [];
    let pos = 0;
    while (buf.length - pos >= 4) {
      const len = messageLength(buf, pos);
      if (buf.length - pos < len) {
        this.need = len;
        break;
      }
      out.push(buf.subarray(pos, pos + len));
      pos += len;
    }
    if (pos < buf.length) {
      // A copy: a view would keep the whole chunk alive while the rest of the message arrives.
      this.pending = [Buffer.from(buf.subarray(pos))];
      this.pendingBytes = buf.length - pos;
    }
    return out;
  }
}

/**
 * 32-bit FNV-1a over the UTF-16 code units of `text`. Stable across processes, languages and
 * versions: it places a job's timers in a shard (shared-state/ports.ts: shardOf) and gives a job
 * its spread offset (timing/jitter.ts). Changing it would move every job's shard and offset.
 */
export function stableHash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

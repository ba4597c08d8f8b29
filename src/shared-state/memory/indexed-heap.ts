/**
 * A binary min-heap of string keys with numeric scores and a key → slot index, so every operation
 * the in-memory wheel and ready queue need is O(log n): upsert, delete by key, pop the minimum.
 *
 * Order: score ascending, then key ascending (UTF-16 code units). For ASCII keys that is the
 * order Redis gives sorted-set members with equal scores, so both adapters agree on ties.
 */
export interface HeapItem {
  key: string;
  score: number;
}

export class IndexedHeap {
  private readonly keys: string[] = [];
  private readonly scores: number[] = [];
  /** Invariant: slot.get(keys[i]) === i for every i. */
  private readonly slot = new Map<string, number>();

  get size(): number {
    return this.keys.length;
  }

  has(key: string): boolean {
    return this.slot.has(key);
  }

  score(key: string): number | undefined {
    const i = this.slot.get(key);
    return i === undefined ? undefined : this.scores[i];
  }

  peek(): HeapItem | undefined {
    return this.keys.length === 0 ? undefined : { key: this.keys[0]!, score: this.scores[0]! };
  }

  /** Inserts `key`, or moves it to `score` when present. */
  set(key: string, score: number): void {
    const i = this.slot.get(key);
    if (i === undefined) {
      this.keys.push(key);
      this.scores.push(score);
      this.slot.set(key, this.keys.length - 1);
      this.up(this.keys.length - 1);
      return;
    }
    const old = this.scores[i]!;
    this.scores[i] = score;
    if (score < old) this.up(i);
    else this.down(i);
  }

  delete(key: string): boolean {
    const i = this.slot.get(key);
    if (i === undefined) return false;
    this.removeAt(i);
    return true;
  }

  pop(): HeapItem | undefined {
    const top = this.peek();
    if (top) this.removeAt(0);
    return top;
  }

  private removeAt(i: number): void {
    const last = this.keys.length - 1;
    this.slot.delete(this.keys[i]!);
    if (i !== last) {
      this.keys[i] = this.keys[last]!;
      this.scores[i] = this.scores[last]!;
      this.slot.set(this.keys[i]!, i);
    }
    this.keys.pop();
    this.scores.pop();
    if (i < this.keys.length) {
      this.up(i);
      this.down(i);
    }
  }

  private less(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.keys[a]! < this.keys[b]!);
  }

  private swap(a: number, b: number): void {
    const k = this.keys[a]!;
    const s = this.scores[a]!;
    this.keys[a] = this.keys[b]!;
    this.scores[a] = this.scores[b]!;
    this.keys[b] = k;
    this.scores[b] = s;
    this.slot.set(this.keys[a]!, a);
    this.slot.set(this.keys[b]!, b);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && this.less(l, min)) min = l;
      if (r < n && this.less(r, min)) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }
}

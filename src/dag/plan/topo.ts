/**
 * Topological order (Kahn's algorithm, ties broken by declaration order, so the same DAG always
 * gives the same order) and cycle finding (one cycle per strongly connected component).
 */
import type { GraphIndex } from "./graph.js";

/** Min-heap of declaration positions: the ready task declared first comes out first. */
class PositionHeap {
  private readonly items: number[] = [];
  get size(): number {
    return this.items.length;
  }
  push(x: number): void {
    const a = this.items;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up]! <= x) break;
      a[i] = a[up]!;
      i = up;
    }
    a[i] = x;
  }
  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * Keys in an order where every parent comes before its children; among tasks ready at the same
 * time, the one declared first. Tasks on or behind a cycle are left out: validate first (an
 * acyclic DAG gives every key).
 */
export function topologicalOrder(graph: GraphIndex): string[] {
  const waiting = new Map<string, number>();
  const heap = new PositionHeap();
  for (const key of graph.keys) {
    const n = graph.parents.get(key)!.length;
    waiting.set(key, n);
    if (n === 0) heap.push(graph.position.get(key)!);
  }
  const order: string[] = [];
  while (heap.size > 0) {
    const key = graph.keys[heap.pop()]!;
    order.push(key);
    for (const child of graph.children.get(key)!) {
      const left = waiting.get(child)! - 1;
      waiting.set(child, left);
      if (left === 0) heap.push(graph.position.get(child)!);
    }
  }
  return order;
}

/**
 * The cycles of the graph, at most one per strongly connected component, each as a path that
 * starts and ends on the same key along parent → child edges (`[a, b, c, a]`: b depends on a,
 * c on b, a on c). Self-dependencies are not cycles here (validation reports them apart). The
 * component's task declared first starts the path, which is a shortest way back to it.
 */
export function findCycles(graph: GraphIndex): string[][] {
  const cycles: string[][] = [];
  for (const component of stronglyConnected(graph)) {
    if (component.length < 2) continue;
    const members = new Set(component);
    const start = component.reduce((a, b) => (graph.position.get(a)! <= graph.position.get(b)! ? a : b));
    cycles.push(shortestLoop(graph, start, members));
  }
  cycles.sort((a, b) => graph.position.get(a[0]!)! - graph.position.get(b[0]!)!);
  return cycles;
}

/** Breadth-first from `start` back to itself inside `members`. */
function shortestLoop(graph: GraphIndex, start: string, members: Set<string>): string[] {
  const from = new Map<string, string>();
  let frontier = [start];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const key of frontier) {
      for (const child of graph.children.get(key)!) {
        if (!members.has(child) || child === key) continue;
        if (child === start) {
          // Walk back from the last step to start, then put the walk in edge order.
          const back: string[] = [];
          for (let at = key; at !== start; at = from.get(at)!) back.push(at);
          return [start, ...back.reverse(), start];
        }
        if (from.has(child)) continue;
        from.set(child, key);
        next.push(child);
      }
    }
    frontier = next;
  }
  throw new Error(`no cycle through ${start} in its strongly connected component`);
}

/** Tarjan's algorithm, iterative (a 1,000-task chain must not overflow the stack). */
function stronglyConnected(graph: GraphIndex): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of graph.keys) {
    if (index.has(root)) continue;
    const work: { key: string; next: number }[] = [{ key: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const kids = graph.children.get(frame.key)!;
      if (frame.next < kids.length) {
        const child = kids[frame.next++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ key: child, next: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.key, Math.min(low.get(frame.key)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.key;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.key)!));
      }
      if (low.get(frame.key) === index.get(frame.key)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.key);
        components.push(component);
      }
    }
  }
  return components;
}

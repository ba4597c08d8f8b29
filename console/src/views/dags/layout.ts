/**
 * A layered drawing of a DAG, left to right (pure, no DOM): each task's layer is its longest path
 * from a root; an edge spanning several layers goes through dummy points (one per layer it
 * crosses); the order within each layer is improved by barycenter sweeps (down, then up), keeping
 * the better of each sweep by counted crossings; then coordinates.
 */
export interface LayoutTask {
  key: string;
  dependsOn: readonly string[];
}

export interface PlacedNode {
  key: string;
  layer: number;
  x: number;
  y: number;
}

export interface PlacedEdge {
  from: string;
  to: string;
  /** The points the edge passes through, from the parent's right side to the child's left. */
  points: Array<[number, number]>;
}

export interface Layout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
  /** Keys by layer then position: a topological order that reads like the picture. */
  order: string[];
}

export const NODE_W = 168;
export const NODE_H = 46;
const GAP_X = 64;
const GAP_Y = 18;
const PAD = 8;
const SWEEPS = 6;
const MAX_DUMMIES = 20_000;
/** Past this many edges, crossings are not counted (quadratic): two sweeps are kept as they are. */
const MAX_COUNTED_EDGES = 3_000;

type Slot = { id: string; dummy: boolean };

export function layoutDag(tasks: readonly LayoutTask[]): Layout {
  const keys = new Set(tasks.map((t) => t.key));
  const parents = new Map(tasks.map((t) => [t.key, t.dependsOn.filter((p) => keys.has(p))]));
  // Longest path from a root (memoised; the API refuses cycles, a guard keeps a bad input finite).
  const layerOf = new Map<string, number>();
  const visiting = new Set<string>();
  const layer = (k: string): number => {
    const known = layerOf.get(k);
    if (known !== undefined) return known;
    if (visiting.has(k)) return 0;
    visiting.add(k);
    let l = 0;
    for (const p of parents.get(k) ?? []) l = Math.max(l, layer(p) + 1);
    visiting.delete(k);
    layerOf.set(k, l);
    return l;
  };
  for (const t of tasks) layer(t.key);
  const depth = Math.max(0, ...layerOf.values()) + 1;

  // Layers of slots: tasks in declaration order, then a dummy per layer an edge crosses.
  const layers: Slot[][] = Array.from({ length: depth }, () => []);
  for (const t of tasks) layers[layerOf.get(t.key)!].push({ id: t.key, dummy: false });
  // Edges between adjacent layers, by slot id: up (child → parents) and down (parent → children).
  const up = new Map<string, string[]>();
  const down = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    (down.get(a) ?? down.set(a, []).get(a)!).push(b);
    (up.get(b) ?? up.set(b, []).get(b)!).push(a);
  };
  const chains: Array<{ from: string; to: string; via: string[] }> = [];
  // Dummies cost a slot per layer crossed: a huge DAG with long edges draws them straight instead.
  let span = 0;
  for (const t of tasks) for (const p of parents.get(t.key)!) span += layerOf.get(t.key)! - layerOf.get(p)! - 1;
  const dummies = span <= MAX_DUMMIES;
  let edgeCount = 0;
  for (const t of tasks) {
    for (const p of parents.get(t.key)!) {
      const lp = layerOf.get(p)!;
      const lc = layerOf.get(t.key)!;
      const via: string[] = [];
      let prev = p;
      edgeCount++;
      for (let l = lp + 1; dummies && l < lc; l++) {
        const id = `\u0000${p}\u0000${t.key}\u0000${l}`;
        layers[l].push({ id, dummy: true });
        via.push(id);
        link(prev, id);
        prev = id;
      }
      link(prev, t.key);
      chains.push({ from: p, to: t.key, via });
    }
  }

  // Barycenter sweeps.
  const pos = new Map<string, number>();
  const index = () => layers.forEach((ls) => ls.forEach((s, i) => pos.set(s.id, i)));
  index();
  const crossings = () => {
    let c = 0;
    for (let l = 0; l + 1 < layers.length; l++) {
      const es: Array<[number, number]> = [];
      for (const s of layers[l]) for (const d of down.get(s.id) ?? []) es.push([pos.get(s.id)!, pos.get(d)!]);
      es.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      for (let i = 0; i < es.length; i++) for (let j = i + 1; j < es.length; j++) if (es[j][1] < es[i][1] && es[j][0] > es[i][0]) c++;
    }
    return c;
  };
  const counted = edgeCount <= MAX_COUNTED_EDGES;
  let best = layers.map((ls) => [...ls]);
  let bestCrossings = layers.length < 2 ? 0 : counted ? crossings() : Infinity;
  for (let sweep = 0; sweep < (counted ? SWEEPS : 2) && bestCrossings > 0; sweep++) {
    const downward = sweep % 2 === 0;
    const range = downward ? [...layers.keys()].slice(1) : [...layers.keys()].slice(0, -1).reverse();
    for (const l of range) {
      const nb = downward ? up : down;
      const bary = new Map<string, number>();
      for (const s of layers[l]) {
        const ns = nb.get(s.id) ?? [];
        bary.set(s.id, ns.length ? ns.reduce((a, n) => a + pos.get(n)!, 0) / ns.length : pos.get(s.id)!);
      }
      layers[l].sort((a, b) => bary.get(a.id)! - bary.get(b.id)! || pos.get(a.id)! - pos.get(b.id)!);
      layers[l].forEach((s, i) => pos.set(s.id, i));
    }
    if (!counted) {
      best = layers.map((ls) => [...ls]);
      continue;
    }
    const c = crossings();
    if (c < bestCrossings) {
      bestCrossings = c;
      best = layers.map((ls) => [...ls]);
    }
  }
  best.forEach((ls, l) => (layers[l] = ls));
  index();

  // Coordinates: layers as columns, each centred vertically on the tallest.
  const rows = Math.max(1, ...layers.map((ls) => ls.length));
  const height = PAD * 2 + rows * NODE_H + (rows - 1) * GAP_Y;
  const width = PAD * 2 + depth * NODE_W + (depth - 1) * GAP_X;
  const point = new Map<string, [number, number]>();
  layers.forEach((ls, l) => {
    const span = ls.length * NODE_H + (ls.length - 1) * GAP_Y;
    const top = PAD + (height - PAD * 2 - span) / 2;
    ls.forEach((s, i) => point.set(s.id, [PAD + l * (NODE_W + GAP_X), top + i * (NODE_H + GAP_Y)]));
  });
  const nodes: PlacedNode[] = [];
  const order: string[] = [];
  layers.forEach((ls, l) =>
    ls.forEach((s) => {
      if (s.dummy) return;
      const [x, y] = point.get(s.id)!;
      nodes.push({ key: s.id, layer: l, x, y });
      order.push(s.id);
    }),
  );
  const edges: PlacedEdge[] = chains.map(({ from, to, via }) => {
    const [fx, fy] = point.get(from)!;
    const [tx, ty] = point.get(to)!;
    const pts: Array<[number, number]> = [[fx + NODE_W, fy + NODE_H / 2]];
    for (const v of via) {
      const [vx, vy] = point.get(v)!;
      pts.push([vx, vy + NODE_H / 2], [vx + NODE_W, vy + NODE_H / 2]);
    }
    pts.push([tx, ty + NODE_H / 2]);
    return { from, to, points: pts };
  });
  return { nodes, edges, width, height, order };
}

/** An SVG path through the points: horizontal-tangent cubic curves between successive pairs. */
export function edgePath(points: ReadonlyArray<[number, number]>): string {
  let d = `M${points[0][0]},${points[0][1]}`;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1];
    const [x1, y1] = points[i];
    if (y0 === y1) {
      d += ` L${x1},${y1}`;
      continue;
    }
    const mx = (x0 + x1) / 2;
    d += ` C${mx},${y0} ${mx},${y1} ${x1},${y1}`;
  }
  return d;
}

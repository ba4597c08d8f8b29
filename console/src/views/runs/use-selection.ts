/** Selected runs of a list: toggle one, shift-click a range (from the last one clicked), all loaded. */
import { useCallback, useMemo, useRef, useState } from "react";

export interface Selection {
  selected: ReadonlySet<string>;
  /** Selected ids in list order. */
  ids: string[];
  onSelect(index: number, shift: boolean): void;
  onSelectAll(all: boolean): void;
  clear(): void;
}

export function useSelection(rows: ReadonlyArray<{ id: string }>): Selection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const anchor = useRef<number | null>(null);
  const rowsRef = useRef(rows);
  rowsRef.current = rows;

  const onSelect = useCallback((index: number, shift: boolean) => {
    const list = rowsRef.current;
    const id = list[index]?.id;
    if (!id) return;
    // Read now: the updater below runs later (during the next render), after the anchor moved.
    const from = anchor.current;
    setSelected((prev) => {
      const next = new Set(prev);
      const on = !prev.has(id);
      if (shift && from !== null && from < list.length) {
        const [a, b] = from < index ? [from, index] : [index, from];
        for (let i = a; i <= b; i++) {
          const r = list[i]!;
          if (on) next.add(r.id);
          else next.delete(r.id);
        }
      } else if (on) next.add(id);
      else next.delete(id);
      return next;
    });
    anchor.current = index;
  }, []);

  const onSelectAll = useCallback((all: boolean) => {
    setSelected(all ? new Set(rowsRef.current.map((r) => r.id)) : new Set());
    anchor.current = null;
  }, []);

  const clear = useCallback(() => {
    setSelected(new Set());
    anchor.current = null;
  }, []);

  // Only ids still in the list count (a reload or a new search may drop some).
  const ids = useMemo(() => rows.filter((r) => selected.has(r.id)).map((r) => r.id), [rows, selected]);
  return { selected, ids, onSelect, onSelectAll, clear };
}

/**
 * Keyboard for a long run of small cells that wrap into rows (the fire ledger's heatmap): the whole
 * run is one tab stop, and the arrow keys move focus between cells (a roving tabindex, as grid
 * widgets do): Left / Right by one cell, Up / Down by one visual row, Home / End to the first and
 * last. Hundreds of cells cost one Tab, not hundreds.
 */
import { useCallback, useState, type FocusEvent, type KeyboardEvent } from "react";

export interface RovingCells {
  /** tabIndex for cell `i`: 0 for the one cell Tab lands on, -1 for the rest. */
  tabIndex(i: number): 0 | -1;
  /** On the cells' container. */
  onKeyDown(e: KeyboardEvent<HTMLElement>): void;
  /** On the cells' container: a cell focused by a click or the mouse becomes the tab stop. */
  onFocus(e: FocusEvent<HTMLElement>): void;
}

/** Cells in the first visual row of `list` (they wrap at its width). */
function perRow(list: HTMLElement): number {
  const cells = list.children;
  const top = (cells[0] as HTMLElement | undefined)?.offsetTop;
  let n = 0;
  while (n < cells.length && (cells[n] as HTMLElement).offsetTop === top) n++;
  return Math.max(1, n);
}

/** `count` cells, the container's element children in order; Tab lands on `start` (default: the last) first. */
export function useRovingCells(count: number, start: "first" | "last" = "last"): RovingCells {
  const [chosen, setChosen] = useState<number | null>(null);
  const active = count === 0 ? -1 : Math.min(chosen ?? (start === "first" ? 0 : count - 1), count - 1);

  const onKeyDown = useCallback(
    (e: KeyboardEvent<HTMLElement>) => {
      const list = e.currentTarget;
      const at = Array.prototype.indexOf.call(list.children, e.target);
      if (at < 0 || e.altKey || e.ctrlKey || e.metaKey) return;
      const moves: Record<string, () => number> = {
        ArrowRight: () => at + 1,
        ArrowLeft: () => at - 1,
        ArrowDown: () => at + perRow(list),
        ArrowUp: () => at - perRow(list),
        Home: () => 0,
        End: () => count - 1,
      };
      const move = moves[e.key];
      if (!move) return;
      e.preventDefault();
      const next = Math.max(0, Math.min(count - 1, move()));
      setChosen(next);
      (list.children[next] as HTMLElement | undefined)?.focus();
    },
    [count],
  );

  const onFocus = useCallback((e: FocusEvent<HTMLElement>) => {
    const at = Array.prototype.indexOf.call(e.currentTarget.children, e.target);
    if (at >= 0) setChosen(at);
  }, []);

  return { tabIndex: (i) => (i === active ? 0 : -1), onKeyDown, onFocus };
}

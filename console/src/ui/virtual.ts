/**
 * Windowing for long lists of fixed-height rows: only the rows in (and near) the scroll container's
 * view are rendered, with spacers for the rest, so 10,000 loaded rows cost what 40 do. The caller
 * renders rows `start` to `end` (exclusive) between a spacer of `before` px and one of `after` px.
 *
 * Scrolling re-renders only when the visible range moves past the overscan, at most once per
 * animation frame.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from "react";

export interface VirtualWindow {
  start: number;
  end: number;
  /** Height of the spacer before the first rendered row (px). */
  before: number;
  /** Height of the spacer after the last rendered row (px). */
  after: number;
}

export function useVirtualWindow(
  container: RefObject<HTMLElement | null>,
  count: number,
  rowHeight: number,
  opts: { overscan?: number; /** Height above the first row inside the container (a sticky header). */ offset?: number } = {},
): VirtualWindow {
  const overscan = opts.overscan ?? 12;
  const offset = opts.offset ?? 0;
  const [view, setView] = useState({ top: 0, height: 800 });
  const frame = useRef(0);

  const measure = useCallback(() => {
    const el = container.current;
    if (!el) return;
    const top = Math.max(0, el.scrollTop - offset);
    const height = el.clientHeight || 800;
    setView((v) => {
      // Re-render only when the range would change by at least a few rows.
      if (Math.abs(v.top - top) < (rowHeight * overscan) / 2 && v.height === height) return v;
      return { top, height };
    });
  }, [container, offset, rowHeight, overscan]);

  useLayoutEffect(() => {
    measure();
  }, [measure, count]);

  useEffect(() => {
    const el = container.current;
    if (!el) return;
    const onScroll = () => {
      if (frame.current) return;
      frame.current = requestAnimationFrame(() => {
        frame.current = 0;
        measure();
      });
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    const ro = new ResizeObserver(onScroll);
    ro.observe(el);
    return () => {
      el.removeEventListener("scroll", onScroll);
      ro.disconnect();
      if (frame.current) cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, [container, measure]);

  const first = Math.floor(view.top / rowHeight);
  const start = Math.max(0, Math.min(count, first - overscan));
  const end = Math.min(count, first + Math.ceil(view.height / rowHeight) + overscan);
  return { start, end: Math.max(start, end), before: start * rowHeight, after: Math.max(0, (count - Math.max(start, end)) * rowHeight) };
}

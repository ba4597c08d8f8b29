/**
 * Remembers what had focus when a dialog opened and gives it back afterwards (the dialogs of this
 * area are mounted only while open, so each page has one at most and their ids stay unique).
 */
import { useCallback, useRef } from "react";

export function useReturnFocus(fallback?: () => HTMLElement | null) {
  const from = useRef<HTMLElement | null>(null);
  const remember = useCallback(() => {
    from.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  }, []);
  const restore = useCallback(() => {
    // After React has rendered the outcome (a button may have changed or gone).
    requestAnimationFrame(() => {
      const el = from.current;
      if (el && el.isConnected) el.focus();
      else fallback?.()?.focus();
      from.current = null;
    });
  }, [fallback]);
  return { remember, restore };
}

/**
 * Above the runs list: the address's filters that are none (`/runs?status=BOGUS`), each with what
 * is allowed, and that the list shows runs without it. Gone once a filter is chosen (the address is
 * written anew from the filters the list uses).
 */
import { useMemo } from "react";
import { ignoredFilters } from "./filters";

export function IgnoredFilters({ search }: { search: string }) {
  const lines = useMemo(() => ignoredFilters(search), [search]);
  if (lines.length === 0) return null;
  return (
    <p role="alert" className="notice ignored-filters">
      {lines.map((l, i) => <span key={l}>{i > 0 && <br />}{l}</span>)}
    </p>
  );
}

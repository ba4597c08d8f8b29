/**
 * Above a filtered list (runs, audit): the address's filters that are none (`/runs?status=BOGUS`,
 * `/audit?from=yesterday`), each with what is allowed, and that the list is shown without it. Gone
 * once a filter is chosen (the address is written anew from the filters the list uses).
 */
export function IgnoredFiltersNotice({ lines }: { lines: string[] }) {
  if (lines.length === 0) return null;
  return (
    <p role="alert" className="notice ignored-filters">
      {lines.map((l, i) => <span key={l}>{i > 0 && <br />}{l}</span>)}
    </p>
  );
}

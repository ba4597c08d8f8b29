/** Previous / next buttons for a cursor-paged list. */
export function Pager(props: { label: string; page: number; hasPrev: boolean; hasNext: boolean; onPrev(): void; onNext(): void; prev?: string; next?: string }) {
  if (!props.hasPrev && !props.hasNext) return null;
  return (
    <nav className="dag-pager actions" aria-label={props.label}>
      <button type="button" onClick={props.onPrev} disabled={!props.hasPrev}>← {props.prev ?? "Previous"}</button>
      <span className="muted">Page {props.page}</span>
      <button type="button" onClick={props.onNext} disabled={!props.hasNext}>{props.next ?? "Next"} →</button>
    </nav>
  );
}

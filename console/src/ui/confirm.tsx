/**
 * A confirmation that says what will happen (and to how many), in a modal <dialog>: focus moves
 * into it, Escape cancels, and focus returns to where it was.
 */
import { useEffect, useRef, type ReactNode } from "react";

export function Confirm(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** The dismissing button's label. @default "Cancel" */
  cancelLabel?: string;
  danger?: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="confirm-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div className="actions">
        <button type="button" onClick={props.onCancel} autoFocus>{props.cancelLabel ?? "Cancel"}</button>
        <button type="button" className={props.danger ? "danger" : "primary"} onClick={props.onConfirm}>{props.confirmLabel}</button>
      </div>
    </dialog>
  );
}

/**
 * Inputs of the lists' filter bars (runs, audit): a text box that commits after a pause in typing,
 * and the conversion between ISO instants and a datetime-local input's value.
 */
import { useEffect, useRef, useState } from "react";

const TYPING_MS = 350;

/** An ISO instant as a datetime-local input's value (local time, minutes). */
export function toLocalInput(iso: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function fromLocalInput(v: string): string {
  if (!v) return "";
  const ms = Date.parse(v); // no zone: local time
  return Number.isNaN(ms) ? "" : new Date(ms).toISOString();
}

/** A text box whose value is committed after a pause in typing (or at once on Enter). */
export function TextFilter(props: { id: string; label: string; value: string; placeholder?: string; type?: string; list?: string; onCommit(v: string): void; className?: string }) {
  const [text, setText] = useState(props.value);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const { onCommit, value } = props;
  // The address changed elsewhere (Back, a link, Clear): show it.
  useEffect(() => setText(value), [value]);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const commit = (v: string) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (v.trim() !== value) onCommit(v.trim());
  };
  return (
    <label htmlFor={props.id} className={props.className}>
      {props.label}
      <input
        id={props.id}
        type={props.type ?? "text"}
        value={text}
        placeholder={props.placeholder}
        list={props.list}
        maxLength={100}
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => {
          const v = e.target.value;
          setText(v);
          if (timer.current) clearTimeout(timer.current);
          timer.current = setTimeout(() => commit(v), TYPING_MS);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") commit(text);
        }}
        onBlur={() => commit(text)}
      />
    </label>
  );
}

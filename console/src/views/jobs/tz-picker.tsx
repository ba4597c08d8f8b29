/** A time zone input: type to search the browser's IANA zones (a datalist), or any name the API knows. */
import { useId, useMemo } from "react";
import { Field } from "./field-errors";

function zones(): string[] {
  const list = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return list.includes("UTC") ? list : ["UTC", ...list];
}

export function TimeZonePicker(props: { value: string; onChange(v: string): void; label?: string }) {
  const listId = useId();
  const all = useMemo(zones, []);
  const known = props.value === "" || all.some((z) => z.toLowerCase() === props.value.toLowerCase());
  return (
    <Field label={props.label ?? "Time zone"} paths={["schedule.timezone"]} hint={known ? "Type to search the IANA zones." : "Not a zone this browser knows; the API checks it."}>
      {(p) => (
        <>
          <input {...p} type="text" list={listId} value={props.value} onChange={(e) => props.onChange(e.target.value)} autoComplete="off" spellCheck={false} placeholder="e.g. Europe/Berlin" />
          <datalist id={listId}>
            {all.map((z) => <option key={z} value={z} />)}
          </datalist>
        </>
      )}
    </Field>
  );
}

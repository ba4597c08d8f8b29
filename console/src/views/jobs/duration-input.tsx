/** A duration typed as a number and a unit (sent as ISO-8601, e.g. PT15M). */
import type { Duration, Unit } from "./form-model";

const UNITS: Array<{ u: Unit; label: string }> = [
  { u: "S", label: "seconds" },
  { u: "M", label: "minutes" },
  { u: "H", label: "hours" },
  { u: "D", label: "days" },
];

export function DurationInput(props: {
  label: string;
  value: Duration;
  onChange(d: Duration): void;
  placeholder?: string;
  aria?: Record<string, unknown>;
}) {
  return (
    <fieldset className="jobs-duration">
      <legend>{props.label}</legend>
      <input
        type="number"
        min="0"
        step="any"
        inputMode="decimal"
        aria-label={`${props.label}: amount`}
        value={props.value.n}
        placeholder={props.placeholder}
        onChange={(e) => props.onChange({ ...props.value, n: e.target.value })}
        {...props.aria}
      />
      <select aria-label={`${props.label}: unit`} value={props.value.unit} onChange={(e) => props.onChange({ ...props.value, unit: e.target.value as Unit })}>
        {UNITS.map((x) => <option key={x.u} value={x.u}>{x.label}</option>)}
      </select>
    </fieldset>
  );
}

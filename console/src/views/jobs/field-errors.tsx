/**
 * The API's refusal of a form, placed next to the control it is about: BAD_USER_INPUT names the
 * input path in extensions.field (e.g. "schedule.cron"), and the message starts with it.
 */
import { createContext, useContext, useId, type ReactNode } from "react";
import type { CombinedError } from "@urql/core";
import { errorText } from "../../api/client";

export interface FieldErrorValue {
  field: string | null;
  message: string;
}

export function fieldErrorOf(error: CombinedError | null | undefined): FieldErrorValue | null {
  const message = errorText(error ?? null);
  if (!error || !message) return null;
  const first = error.graphQLErrors[0];
  const ext = first?.extensions?.field;
  const field = typeof ext === "string" ? ext : (/^([A-Za-z][\w.[\]]*): /.exec(first?.message ?? "")?.[1] ?? null);
  return { field, message };
}

const Ctx = createContext<FieldErrorValue | null>(null);
export const FieldErrorProvider = Ctx.Provider;

/** True when the error is about `path` or something inside it ("spec.http" covers "spec.http.url"). */
export function covers(path: string, field: string | null | undefined): boolean {
  if (!field) return false;
  if (field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`)) return true;
  // The API names schedule and spec fields with or without their parent ("cron" for "schedule.cron").
  const leaf = path.split(".").slice(1).join(".");
  return !!leaf && (field === leaf || field.startsWith(`${leaf}.`));
}

/**
 * For one control: its aria attributes and the message to render after it. `paths` are the input
 * paths the control edits.
 */
export function useFieldError(...paths: string[]): { id: string; message: string | null; aria: { "aria-invalid"?: true; "aria-describedby"?: string } } {
  const err = useContext(Ctx);
  const id = useId();
  const hit = !!err && paths.some((p) => covers(p, err.field));
  return { id, message: hit ? err!.message : null, aria: hit ? { "aria-invalid": true, "aria-describedby": id } : {} };
}

export function FieldMessage({ id, message }: { id: string; message: string | null }) {
  if (!message) return null;
  return <span id={id} className="jobs-field-error">{message}</span>;
}

export interface ControlProps {
  id: string;
  "aria-invalid"?: true;
  "aria-describedby"?: string;
}

/**
 * One labelled control: the label names only the control (hints and the API's message are outside
 * it and describe the control), and the message shows when the API's refusal is about `paths`.
 */
export function Field(props: { label: string; paths?: string[]; hint?: ReactNode; className?: string; children(p: ControlProps): ReactNode }) {
  const id = useId();
  const hintId = useId();
  const err = useFieldError(...(props.paths ?? []));
  const described = [props.hint ? hintId : null, err.message ? err.id : null].filter(Boolean).join(" ");
  return (
    <div className={`jobs-field${props.className ? ` ${props.className}` : ""}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, ...(err.message ? { "aria-invalid": true } : {}), ...(described ? { "aria-describedby": described } : {}) })}
      {props.hint && <span id={hintId} className="hint">{props.hint}</span>}
      <FieldMessage id={err.id} message={err.message} />
    </div>
  );
}

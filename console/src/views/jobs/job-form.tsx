/**
 * The job editor's form (create and edit): what runs, when, and how (retries, timeout, priority,
 * pool, tags, resources, policies). The API checks everything; its refusal is shown at the top and
 * next to the field it names.
 */
import { useRef, useState, type FormEvent } from "react";
import type { CombinedError } from "@urql/core";
import { DurationInput } from "./duration-input";
import { Field, FieldErrorProvider, FieldMessage, fieldErrorOf, useFieldError, type FieldErrorValue } from "./field-errors";
import { formProblem, type FormState, type Kind } from "./form-model";
import { ScheduleEditor } from "./schedule-editor";
import { SpecFields } from "./spec-fields";

export function JobForm(props: {
  initial: FormState;
  creating: boolean;
  submitLabel: string;
  onSubmit(f: FormState): Promise<CombinedError | null>;
  onCancel(): void;
}) {
  const [f, setF] = useState(props.initial);
  const [error, setError] = useState<CombinedError | null>(null);
  /** The form's own refusal (formProblem), before anything is sent. */
  const [problem, setProblem] = useState<FieldErrorValue | null>(null);
  const [busy, setBusy] = useState(false);
  const summary = useRef<HTMLDivElement>(null);
  const set = (patch: Partial<FormState>) => setF((x) => ({ ...x, ...patch }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const local = formProblem(f);
    setProblem(local);
    if (local) {
      setError(null);
      requestAnimationFrame(() => summary.current?.focus());
      return;
    }
    setBusy(true);
    const err = await props.onSubmit(f);
    setBusy(false);
    setError(err);
    if (err) requestAnimationFrame(() => summary.current?.focus());
  }

  const fe = problem ?? fieldErrorOf(error);
  return (
    <FieldErrorProvider value={fe}>
      <form className="jobs-form" onSubmit={submit} noValidate aria-describedby={fe ? "job-form-error" : undefined}>
        <div ref={summary} tabIndex={-1} className="jobs-summary">
          {fe && (
            <p id="job-form-error" role="alert" className="error">
              {fe.field ? <><strong>{fe.field}</strong>: </> : null}
              {fe.field && fe.message.startsWith(`${fe.field}: `) ? fe.message.slice(fe.field.length + 2) : fe.message}
            </p>
          )}
        </div>
        <Basics f={f} set={set} />
        <fieldset className="card">
          <legend>What it runs</legend>
          <KindPicker f={f} set={set} />
          <SpecFields f={f} set={set} />
        </fieldset>
        <ScheduleEditor value={f.schedule} onChange={(schedule) => set({ schedule })} />
        <HowItRuns f={f} set={set} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy} aria-busy={busy}>{busy ? "Saving…" : props.submitLabel}</button>
          <button type="button" onClick={props.onCancel}>Cancel</button>
          {props.creating && (
            <label className="inline">
              <input type="checkbox" checked={f.paused} onChange={(e) => set({ paused: e.target.checked })} />
              Create it paused
            </label>
          )}
        </div>
      </form>
    </FieldErrorProvider>
  );
}

type Set = (patch: Partial<FormState>) => void;

function Basics({ f, set }: { f: FormState; set: Set }) {
  return (
    <fieldset className="card">
      <legend>Job</legend>
      <div className="jobs-row">
        <Field label="Name" paths={["name"]} className="jobs-grow">
          {(p) => <input {...p} type="text" value={f.name} onChange={(e) => set({ name: e.target.value })} required autoComplete="off" />}
        </Field>
        <Field label="Tags (comma-separated)" paths={["tags"]} className="jobs-grow">
          {(p) => <input {...p} type="text" value={f.tags} onChange={(e) => set({ tags: e.target.value })} placeholder="nightly, reports" autoComplete="off" />}
        </Field>
      </div>
      <Field label="Description" paths={["description"]}>
        {(p) => <input {...p} type="text" value={f.description} onChange={(e) => set({ description: e.target.value })} />}
      </Field>
    </fieldset>
  );
}

function KindPicker({ f, set }: { f: FormState; set: Set }) {
  return (
    <Field label="Kind" paths={["spec.kind"]}>
      {(p) => (
        <select {...p} value={f.kind} onChange={(e) => set({ kind: e.target.value as Kind })}>
          <option value="COMMAND">Command (shell or program)</option>
          <option value="SCRIPT">Script (bash, sh, python3, node)</option>
          <option value="HTTP">HTTP request</option>
        </select>
      )}
    </Field>
  );
}

function HowItRuns({ f, set }: { f: FormState; set: Set }) {
  const timeout = useFieldError("spec.timeout");
  const retry = useFieldError("retry");
  const res = useFieldError("spec.resources");
  const retries = Number(f.retryAttempts) > 1;
  const num = (label: string, key: "cpu" | "memoryMb" | "pids" | "diskMb", step = "1") => (
    <Field label={label}>
      {(p) => <input {...p} {...res.aria} type="number" min="0" step={step} value={f[key]} onChange={(e) => set({ [key]: e.target.value } as Partial<FormState>)} />}
    </Field>
  );
  return (
    <fieldset className="card">
      <legend>How it runs</legend>
      <div className="jobs-row">
        <div>
          <DurationInput label="Timeout per attempt" value={f.timeout} onChange={(timeout) => set({ timeout })} placeholder={f.kind === "HTTP" ? "30 s" : "1 h"} aria={timeout.aria} />
          <FieldMessage id={timeout.id} message={timeout.message} />
        </div>
        <Field label="Priority (0–9)" paths={["priority"]}>
          {(p) => <input {...p} type="number" min="0" max="9" value={f.priority} onChange={(e) => set({ priority: e.target.value })} placeholder="0" />}
        </Field>
        <Field label="Pool" paths={["spec.pool"]}>
          {(p) => <input {...p} type="text" value={f.pool} onChange={(e) => set({ pool: e.target.value })} placeholder="default" autoComplete="off" />}
        </Field>
      </div>
      <div className="jobs-row">
        <Field label="Attempts in all (1 = no retries)">
          {(p) => <input {...p} {...retry.aria} type="number" min="1" max="100" value={f.retryAttempts} onChange={(e) => set({ retryAttempts: e.target.value })} placeholder="1" />}
        </Field>
        {retries && (
          <>
            <Field label="Backoff">
              {(p) => (
                <select {...p} value={f.retryBackoff} onChange={(e) => set({ retryBackoff: e.target.value as FormState["retryBackoff"] })}>
                  <option value="EXPONENTIAL">exponential</option>
                  <option value="FIXED">fixed</option>
                </select>
              )}
            </Field>
            <DurationInput label="First retry after" value={f.retryInitial} onChange={(retryInitial) => set({ retryInitial })} placeholder="1" />
            <DurationInput label="Longest wait" value={f.retryMax} onChange={(retryMax) => set({ retryMax })} placeholder="100" />
          </>
        )}
      </div>
      <FieldMessage id={retry.id} message={retry.message} />
      {f.kind !== "HTTP" && (
        <fieldset className="jobs-resources">
          <legend>Resources per attempt (empty: the pool's defaults)</legend>
          <div className="jobs-row">
            {num("CPU cores", "cpu", "0.1")}
            {num("Memory (MiB)", "memoryMb")}
            {num("Processes", "pids")}
            {num("Disk (MiB)", "diskMb")}
          </div>
          <FieldMessage id={res.id} message={res.message} />
        </fieldset>
      )}
      <div className="jobs-row">
        <Field label="When a run is still going" paths={["overlap"]}>
          {(p) => (
            <select {...p} value={f.overlap} onChange={(e) => set({ overlap: e.target.value as FormState["overlap"] })}>
              <option value="ALLOW">start anyway</option>
              <option value="FORBID">skip the fire</option>
              <option value="QUEUE_ONE">keep one waiting</option>
              <option value="REPLACE">cancel it and start</option>
            </select>
          )}
        </Field>
        <Field label="Missed fires (e.g. after downtime)" paths={["misfire", "catchupWindow"]}>
          {(p) => (
            <select {...p} value={f.misfire} onChange={(e) => set({ misfire: e.target.value as FormState["misfire"] })}>
              <option value="FIRE_ONCE">run once for all of them</option>
              <option value="FIRE_ALL">run each (up to a cap)</option>
              <option value="SKIP">run none</option>
            </select>
          )}
        </Field>
      </div>
    </fieldset>
  );
}

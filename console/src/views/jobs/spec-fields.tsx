/** The job editor's kind-specific fields: a command (shell or argv), a script, or an HTTP request. */
import { useId } from "react";
import type { FormState } from "./form-model";
import { INTERPRETERS, METHODS } from "./form-model";
import { Field } from "./field-errors";

type Set = (patch: Partial<FormState>) => void;

export function SpecFields({ f, set }: { f: FormState; set: Set }) {
  if (f.kind === "HTTP") return <HttpFields f={f} set={set} />;
  if (f.kind === "SCRIPT") return <ScriptFields f={f} set={set} />;
  return <CommandFields f={f} set={set} />;
}

function CommandFields({ f, set }: { f: FormState; set: Set }) {
  const name = useId();
  return (
    <>
      <div className="jobs-modes" role="radiogroup" aria-label="How the command runs">
        <label className="inline">
          <input type="radio" name={name} checked={f.commandMode === "shell"} onChange={() => set({ commandMode: "shell" })} />
          Shell command (/bin/sh -c)
        </label>
        <label className="inline">
          <input type="radio" name={name} checked={f.commandMode === "argv"} onChange={() => set({ commandMode: "argv" })} />
          Program and arguments (no shell)
        </label>
      </div>
      {f.commandMode === "shell" ? (
        <Field label="Command" paths={["spec.command"]}>
          {(p) => <textarea {...p} rows={3} value={f.command} onChange={(e) => set({ command: e.target.value })} spellCheck={false} placeholder="echo hello" />}
        </Field>
      ) : (
        <Field label="Program and arguments, one per line" paths={["spec.argv"]}>
          {(p) => <textarea {...p} rows={4} value={f.argv} onChange={(e) => set({ argv: e.target.value })} spellCheck={false} placeholder={"/usr/bin/env\nprintenv"} />}
        </Field>
      )}
      <SandboxFields f={f} set={set} />
    </>
  );
}

function ScriptFields({ f, set }: { f: FormState; set: Set }) {
  return (
    <>
      <Field label="Interpreter" paths={["spec.interpreter"]} hint="Runs only on nodes that have it.">
        {(p) => (
          <select {...p} value={f.interpreter} onChange={(e) => set({ interpreter: e.target.value })}>
            {INTERPRETERS.map((i) => <option key={i} value={i}>{i}</option>)}
          </select>
        )}
      </Field>
      <Field label="Script" paths={["spec.source"]}>
        {(p) => <textarea {...p} rows={8} value={f.source} onChange={(e) => set({ source: e.target.value })} spellCheck={false} />}
      </Field>
      <Field label="Arguments, one per line" paths={["spec.args"]}>
        {(p) => <textarea {...p} rows={2} value={f.args} onChange={(e) => set({ args: e.target.value })} spellCheck={false} />}
      </Field>
      <SandboxFields f={f} set={set} />
    </>
  );
}

function SandboxFields({ f, set }: { f: FormState; set: Set }) {
  return (
    <div className="jobs-row">
      <Field label="Environment, NAME=value per line" paths={["spec.env"]} className="jobs-grow">
        {(p) => <textarea {...p} rows={2} value={f.env} onChange={(e) => set({ env: e.target.value })} spellCheck={false} />}
      </Field>
      <Field label="Network" paths={["spec.network"]}>
        {(p) => (
          <select {...p} value={f.network} onChange={(e) => set({ network: e.target.value as FormState["network"] })}>
            <option value="NONE">none</option>
            <option value="EGRESS">outbound (where the pool offers it)</option>
          </select>
        )}
      </Field>
    </div>
  );
}

function HttpFields({ f, set }: { f: FormState; set: Set }) {
  return (
    <>
      <div className="jobs-row">
        <Field label="Method" paths={["spec.http.method"]}>
          {(p) => (
            <select {...p} value={f.httpMethod} onChange={(e) => set({ httpMethod: e.target.value })}>
              {METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          )}
        </Field>
        <Field label="URL" paths={["spec.http.url"]} className="jobs-grow">
          {(p) => <input {...p} type="url" value={f.httpUrl} onChange={(e) => set({ httpUrl: e.target.value })} placeholder="https://hooks.example.com/kairos" />}
        </Field>
      </div>
      <Field label="Headers, Name: value per line" paths={["spec.http.headers"]}>
        {(p) => <textarea {...p} rows={3} value={f.httpHeaders} onChange={(e) => set({ httpHeaders: e.target.value })} spellCheck={false} placeholder="Content-Type: application/json" />}
      </Field>
      {f.httpMethod !== "GET" && f.httpMethod !== "HEAD" && (
        <Field label="Body" paths={["spec.http.body"]}>
          {(p) => <textarea {...p} rows={4} value={f.httpBody} onChange={(e) => set({ httpBody: e.target.value })} spellCheck={false} />}
        </Field>
      )}
      <Field label="Statuses that count as success (comma-separated)" paths={["spec.http.successStatuses"]}>
        {(p) => <input {...p} type="text" value={f.httpSuccess} onChange={(e) => set({ httpSuccess: e.target.value })} placeholder="2xx, 304" />}
      </Field>
    </>
  );
}

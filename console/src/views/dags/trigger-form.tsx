/**
 * Trigger a DAG with params: a JSON object checked here as the user types (parse errors say where),
 * merged by the API over the DAG's defaults per top-level key; the API's refusal shown as it says it.
 */
import { useId, useState, type FormEvent } from "react";
import { Link } from "wouter";
import { useMutation } from "urql";
import { TriggerDagDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine } from "../../ui/page";

/** null when the text is a JSON object, else why not. */
export function paramsProblem(text: string): string | null {
  if (text.trim() === "") return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return `Not JSON: ${(e as Error).message}`;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return "Params must be a JSON object, e.g. {\"day\": \"2026-11-24\"}";
  return null;
}

export function TriggerForm({ dagId, defaults, onTriggered }: { dagId: string; defaults: Record<string, unknown>; onTriggered(id: string): void }) {
  const id = useId();
  const [text, setText] = useState("{}");
  const [key, setKey] = useState("");
  const [touched, setTouched] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [res, trigger] = useMutation(TriggerDagDocument);
  const problem = paramsProblem(text);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setDone(null);
    if (problem) return;
    const params = text.trim() === "" ? null : (JSON.parse(text) as Record<string, unknown>);
    const r = await trigger({ id: dagId, params, idempotencyKey: key.trim() || null });
    if (r.data) {
      setDone(r.data.triggerDag.id);
      onTriggered(r.data.triggerDag.id);
    }
  };

  const defaultsText = JSON.stringify(defaults);
  return (
    <form className="card dag-trigger" onSubmit={submit} noValidate aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Trigger a DAG run</h2>
      <label htmlFor={`${id}-params`}>Params (a JSON object, over the DAG's defaults per top-level key)</label>
      <textarea
        id={`${id}-params`}
        rows={4}
        spellCheck={false}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => setTouched(true)}
        aria-invalid={touched && !!problem}
        aria-describedby={`${id}-hint ${id}-problem`}
      />
      <p id={`${id}-hint`} className="hint">
        Defaults: <code>{defaultsText.length > 300 ? `${defaultsText.slice(0, 299)}…` : defaultsText}</code>
      </p>
      <p id={`${id}-problem`} className={touched && problem ? "error" : "dag-sr"} role={touched && problem ? "alert" : undefined}>
        {touched && problem ? problem : ""}
      </p>
      <label htmlFor={`${id}-key`}>Idempotency key (optional: a repeat answers the first DAG run)</label>
      <input id={`${id}-key`} value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
      <div className="actions">
        <button type="submit" className="primary" disabled={res.fetching}>{res.fetching ? "Triggering…" : "Trigger"}</button>
        {done && (
          <span role="status">
            Triggered: <Link href={`/dag-runs/${done}`}>DAG run {done}</Link>
          </span>
        )}
      </div>
      <ErrorLine error={res.error ? errorText(res.error) : null} />
    </form>
  );
}

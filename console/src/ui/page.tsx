/** A view's frame: its heading (also the document's title), actions, and an error or loading line. */
import { useEffect, type ReactNode } from "react";
import type { CombinedError } from "@urql/core";
import { errorText } from "../api/client";

export function Page({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = `${typeof title === "string" ? title : "Kairos"} · Kairos`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title" tabIndex={-1}>{title}</h1>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function ErrorLine({ error }: { error: CombinedError | Error | string | null | undefined }) {
  const text = typeof error === "string" ? error : errorText(error ?? null);
  if (!text) return null;
  return <p role="alert" className="error">{text}</p>;
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return <p className="muted" role="status">{what}…</p>;
}

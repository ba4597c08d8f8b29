/**
 * Downloads one attempt's whole log: the archive's short-lived link (gzip) when it is archived,
 * else the log read page by page through `Run.logs` and saved as a text file.
 */
import { useState } from "react";
import { useClient } from "urql";
import { ConsoleRunLogPageDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";

function save(href: string, filename: string) {
  const a = document.createElement("a");
  a.href = href;
  a.download = filename;
  a.rel = "noopener";
  document.body.append(a);
  a.click();
  a.remove();
}

export function LogDownload({ runId, status }: { runId: string; status: { token: number; attempt: number; state: string; bytes: number } | null }) {
  const client = useClient();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const base = `run-${runId}-attempt-${status?.attempt ?? 0}`;

  async function download() {
    if (!status) return;
    setError(null);
    setBusy("Preparing…");
    try {
      if (status.state === "ARCHIVED") {
        const r = await client.query(ConsoleRunLogPageDocument, { id: runId, token: status.token, offset: 0, limit: 1 }, { requestPolicy: "network-only" }).toPromise();
        if (r.error) throw new Error(errorText(r.error) ?? "failed");
        if (r.data?.run.logUrl) {
          save(r.data.run.logUrl, `${base}.log.gz`);
          return;
        }
      }
      const parts: string[] = [];
      let offset = 0;
      for (;;) {
        const r = await client.query(ConsoleRunLogPageDocument, { id: runId, token: status.token, offset, limit: 1000 }, { requestPolicy: "network-only" }).toPromise();
        if (r.error) throw new Error(errorText(r.error) ?? "failed");
        const chunks = r.data?.run.logs ?? [];
        if (chunks.length === 0) break;
        for (const c of chunks) parts.push(c.data);
        const last = chunks[chunks.length - 1]!;
        offset = last.offset + last.size;
        setBusy(`Reading… ${Math.round(offset / 1024).toLocaleString()} KiB`);
      }
      const url = URL.createObjectURL(new Blob(parts, { type: "text/plain;charset=utf-8" }));
      save(url, `${base}.log`);
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      setError(`Download failed: ${(e as Error).message}`);
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <button type="button" onClick={() => void download()} disabled={!status || status.state === "EXPIRED" || !!busy} title={!status ? "Nothing printed yet" : undefined}>
        {busy ?? "Download log"}
      </button>
      {error && <span className="error" role="alert">{error}</span>}
    </>
  );
}

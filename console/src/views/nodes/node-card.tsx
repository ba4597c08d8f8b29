/** One executor node: health, where it runs, what it has, what is reserved, how it isolates runs. */
import { useId, useState } from "react";
import type { ConsoleNodeFieldsFragment } from "../../../../generated/client/graphql";
import { Time } from "../../ui/time";
import { NodeAllocations } from "./node-allocations";
import { cores, enforcedWords, isolationSummary, mib, networkWords, shortVersion, statusTone, statusWord } from "./node-words";

type Node = ConsoleNodeFieldsFragment;

export function NodeCard({ node, isAdmin }: { node: Node; isAdmin: boolean }) {
  const [open, setOpen] = useState(false);
  const panel = useId();
  const headingId = useId();
  const labels = Object.entries(node.labels ?? {});
  return (
    <article className="card node" aria-labelledby={headingId} data-node={node.name}>
      <header className="node-head">
        <h2 id={headingId}>{node.name}</h2>
        <span className={`badge tone-${statusTone(node.status)}`} data-status={node.status}>{statusWord(node.status)}</span>
        <span className="muted node-host">on <span className="mono">{node.host}</span></span>
      </header>

      <div className="node-meters">
        <Meter
          label="CPU"
          used={node.allocated.cpu}
          total={node.capacity.cpus}
          text={`${cores(node.allocated.cpu)} of ${cores(node.capacity.cpus)} reserved · ${cores(node.free.cpu)} free`}
        />
        <Meter
          label="Memory"
          used={node.allocated.memoryMb}
          total={node.capacity.memoryMb}
          text={`${mib(node.allocated.memoryMb)} of ${mib(node.capacity.memoryMb)} reserved · ${mib(node.free.memoryMb)} free`}
        />
        <Meter label="Slots" used={node.running} total={node.capacity.slots} text={`${node.running} of ${node.capacity.slots} running`} />
      </div>

      <dl className="facts node-facts">
        <dt>Last heartbeat</dt>
        <dd><Time iso={node.lastHeartbeatAt} mode="relative" /></dd>
        <dt>Host usage</dt>
        <dd>load {node.usage.load1} ({node.usage.cpuPercent} % of its CPUs) · {mib(node.usage.memoryMb)} memory in use</dd>
        <dt>Pools</dt>
        <dd>{node.pools.length ? node.pools.map((p) => <span key={p} className="node-chip">{p}</span>) : <span className="muted">none</span>}</dd>
        <dt>Labels</dt>
        <dd>
          {labels.length ? labels.map(([k, v]) => <span key={k} className="node-chip mono">{k}={typeof v === "string" ? v : JSON.stringify(v)}</span>) : <span className="muted">none</span>}
        </dd>
        <dt>Interpreters</dt>
        <dd>
          {node.interpreters.length ? (
            node.interpreters.map((i) => (
              <span key={i.name} className="node-chip" title={`${i.path}${i.version ? `: ${i.version}` : ""}`}>{i.name}{i.version ? ` ${shortVersion(i.version)}` : ""}</span>
            ))
          ) : (
            <span className="muted">none (SCRIPT jobs do not run here)</span>
          )}
        </dd>
        {(node.maxRun || node.defaultRun) && (
          <>
            <dt>Per run</dt>
            <dd>
              {node.defaultRun && <>default {cores(node.defaultRun.cpu)}, {mib(node.defaultRun.memoryMb)}</>}
              {node.defaultRun && node.maxRun && " · "}
              {node.maxRun && <>at most {cores(node.maxRun.cpu)}, {mib(node.maxRun.memoryMb)}</>}
            </dd>
          </>
        )}
        <dt>Up since</dt>
        <dd><Time iso={node.startedAt} /></dd>
      </dl>

      <Isolation node={node} />

      <button type="button" className="node-toggle" aria-expanded={open} aria-controls={panel} onClick={() => setOpen((o) => !o)}>
        {open ? "Hide" : "Show"} running attempts ({node.running})
      </button>
      <div id={panel} hidden={!open}>
        {open && <NodeAllocations nodeId={node.id} nodeName={node.name} isAdmin={isAdmin} />}
      </div>
    </article>
  );
}

function Isolation({ node }: { node: Node }) {
  const iso = node.isolation;
  return (
    <section className="node-isolation" aria-label={`Isolation on ${node.name}`}>
      <h3>Isolation</h3>
      <p>{isolationSummary(iso)}{iso && ` ${networkWords(iso.network)}`}</p>
      {iso && iso.enforced.length > 0 && (
        <details>
          <summary>Each run gets {iso.enforced.length} protections</summary>
          <ul>
            {iso.enforced.map((e) => <li key={e} title={e}>{enforcedWords(e)}</li>)}
          </ul>
        </details>
      )}
      {iso && iso.notes.length > 0 && (
        <div className="notice node-notes">
          <strong>Not enforced:</strong>
          <ul>{iso.notes.map((n) => <li key={n}>{n}</li>)}</ul>
        </div>
      )}
    </section>
  );
}

/** A bar for how much of a total is reserved, with the numbers in text (the bar is decoration). */
function Meter({ label, used, total, text }: { label: string; used: number; total: number; text: string }) {
  const pct = total > 0 ? Math.min(100, Math.max(0, (used / total) * 100)) : 0;
  const tone = pct >= 90 ? "bad" : pct >= 70 ? "warn" : "run";
  return (
    <div className="meter">
      <div className="meter-label"><strong>{label}</strong> <span>{text}</span></div>
      <div className="meter-track" aria-hidden="true">
        <div className={`meter-fill fill-${tone}`} style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

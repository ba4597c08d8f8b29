/**
 * The next fires of a schedule: each in the job's zone (its wall time and offset) and in the
 * user's, with DST marked: the API's tag for a fire a DST rule moved or doubled, and a note where
 * the zone's offset changes between two fires.
 */
import { relative, useNow } from "../../ui/time";
import { dstTagText, inYourZone, markFires, wallOf, YOUR_ZONE } from "./fires";

export function NextFires(props: {
  fires: ReadonlyArray<{ at: string; local: string; dst?: string | null }>;
  zone: string;
  caption: string;
  empty?: string;
}) {
  const now = useNow(15_000);
  if (props.fires.length === 0) return <p className="muted">{props.empty ?? "No fires are coming."}</p>;
  const marked = markFires(props.fires);
  const sameZone = props.zone === YOUR_ZONE;
  return (
    <div className="table-wrap">
      <table className="jobs-fires">
        <caption className="jobs-sr-only">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">In {props.zone}</th>
            {!sameZone && <th scope="col">Your time ({YOUR_ZONE})</th>}
            <th scope="col">When</th>
            <th scope="col">DST</th>
          </tr>
        </thead>
        <tbody>
          {marked.map((f, i) => (
            <tr key={`${f.at}-${i}`} className={f.dst || f.offsetChange ? "jobs-dst-row" : undefined} data-dst={f.dst || f.offsetChange ? "yes" : undefined}>
              <td>{i + 1}</td>
              <td>
                <time dateTime={f.at} title={f.at} className="mono">{wallOf(f.local)}</time>{" "}
                <span className="muted mono">{f.local.slice(-6)}</span>
              </td>
              {!sameZone && <td>{inYourZone(f.at)}</td>}
              <td>{relative(Date.parse(f.at), now)}</td>
              <td>
                {f.offsetChange && (
                  <span className="badge tone-warn">
                    offset {f.offsetChange.from} → {f.offsetChange.to}
                  </span>
                )}
                {f.dst && <span className="jobs-dst-note">{dstTagText(f.dst)}</span>}
                {!f.dst && !f.offsetChange && <span className="muted">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

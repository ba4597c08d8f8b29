/**
 * The schedule part of the job editor: now, at a time, after a delay, every interval, or cron in a
 * time zone; and, as the user types, the API's preview of it (its description and next fires, or
 * why it is refused).
 */
import { useId } from "react";
import { YOUR_ZONE } from "./fires";
import type { ScheduleMode, ScheduleState } from "./form-model";
import { DurationInput } from "./duration-input";
import { Field, FieldMessage, useFieldError } from "./field-errors";
import { SchedulePreview } from "./schedule-preview";
import { TimeZonePicker } from "./tz-picker";

const MODES: Array<{ mode: ScheduleMode; label: string }> = [
  { mode: "NOW", label: "Now, once" },
  { mode: "AT", label: "Once, at a time" },
  { mode: "DELAY", label: "Once, after a delay" },
  { mode: "EVERY", label: "Every interval" },
  { mode: "CRON", label: "Cron" },
];

export function ScheduleEditor({ value, onChange }: { value: ScheduleState; onChange(s: ScheduleState): void }) {
  const set = (patch: Partial<ScheduleState>) => onChange({ ...value, ...patch });
  const name = useId();
  const delayErr = useFieldError("schedule.delay");
  const everyErr = useFieldError("schedule.every");
  const kindErr = useFieldError("schedule.kind", "schedule.startAt", "schedule.endAt");
  return (
    <fieldset className="card jobs-schedule">
      <legend>Schedule</legend>
      <div className="jobs-modes" role="radiogroup" aria-label="When it runs">
        {MODES.map((m) => (
          <label key={m.mode} className="inline">
            <input type="radio" name={name} value={m.mode} checked={value.mode === m.mode} onChange={() => set({ mode: m.mode })} />
            {m.label}
          </label>
        ))}
      </div>
      <FieldMessage id={kindErr.id} message={kindErr.message} />
      <div className="jobs-row">
        {value.mode === "AT" && (
          <Field label={`Run at (your time, ${YOUR_ZONE})`} paths={["schedule.at"]}>
            {(p) => <input {...p} type="datetime-local" value={value.at} onChange={(e) => set({ at: e.target.value })} required />}
          </Field>
        )}
        {value.mode === "DELAY" && (
          <div>
            <DurationInput label="Run after" value={value.delay} onChange={(delay) => set({ delay })} aria={delayErr.aria} />
            <FieldMessage id={delayErr.id} message={delayErr.message} />
          </div>
        )}
        {value.mode === "EVERY" && (
          <div>
            <DurationInput label="Every" value={value.every} onChange={(every) => set({ every })} aria={everyErr.aria} />
            <FieldMessage id={everyErr.id} message={everyErr.message} />
          </div>
        )}
        {value.mode === "CRON" && (
          <Field label="Cron expression" paths={["schedule.cron"]} className="jobs-grow" hint="minute hour day-of-month month day-of-week (or 6 fields, seconds first), or @daily, @hourly…">
            {(p) => <input {...p} type="text" className="mono" value={value.cron} onChange={(e) => set({ cron: e.target.value })} placeholder="0 9 * * 1-5" spellCheck={false} autoComplete="off" />}
          </Field>
        )}
        {(value.mode === "CRON" || value.mode === "EVERY") && (
          <TimeZonePicker value={value.timezone} onChange={(timezone) => set({ timezone })} label={value.mode === "CRON" ? "Time zone" : "Time zone (for display)"} />
        )}
      </div>
      {value.mode === "CRON" && (
        <div className="jobs-row">
          <Field label="A wall time that does not exist (spring forward)" paths={["schedule.dstGap"]}>
            {(p) => (
              <select {...p} value={value.dstGap} onChange={(e) => set({ dstGap: e.target.value as ScheduleState["dstGap"] })}>
                <option value="SHIFT">run at the end of the gap</option>
                <option value="SKIP">skip it</option>
              </select>
            )}
          </Field>
          <Field label="A wall time that happens twice (fall back)" paths={["schedule.dstRepeat"]}>
            {(p) => (
              <select {...p} value={value.dstRepeat} onChange={(e) => set({ dstRepeat: e.target.value as ScheduleState["dstRepeat"] })}>
                <option value="FIRST">run the first time</option>
                <option value="LAST">run the second time</option>
                <option value="BOTH">run both times</option>
              </select>
            )}
          </Field>
        </div>
      )}
      <SchedulePreview schedule={value} />
    </fieldset>
  );
}

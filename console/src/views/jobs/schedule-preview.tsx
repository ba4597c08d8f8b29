/**
 * The schedule as the API reads it, while the user types: after 250 ms without a change the form's
 * schedule goes to previewSchedule; its description and next fires (in the zone and the user's),
 * or its refusal, are shown here.
 */
import { useMemo } from "react";
import { cronInWords } from "../../ui/cron-words";
import type { ScheduleState } from "./form-model";
import { scheduleInput } from "./form-model";
import { NextFires } from "./next-fires";
import { useDebounced } from "./use-debounced";
import { useSchedulePreview } from "./use-schedule-preview";

const DEBOUNCE_MS = 250;

/** A schedule worth asking about (an empty cron or time would only be refused). */
function ready(s: ScheduleState): boolean {
  if (s.mode === "CRON") return s.cron.trim() !== "";
  if (s.mode === "AT") return s.at !== "";
  if (s.mode === "DELAY") return s.delay.n.trim() !== "";
  if (s.mode === "EVERY") return s.every.n.trim() !== "";
  return true;
}

export function SchedulePreview({ schedule }: { schedule: ScheduleState }) {
  const input = useMemo(() => (ready(schedule) ? scheduleInput(schedule) : null), [schedule]);
  const key = JSON.stringify(input);
  const debouncedKey = useDebounced(key, DEBOUNCE_MS);
  const settled = useMemo(() => JSON.parse(debouncedKey) as ReturnType<typeof scheduleInput> | null, [debouncedKey]);
  const preview = useSchedulePreview(settled);
  const zone = schedule.mode === "CRON" || schedule.mode === "EVERY" ? schedule.timezone || "UTC" : "UTC";
  const pending = key !== debouncedKey || preview.fetching;
  const words = settled?.kind === "CRON" && settled.cron ? cronInWords(settled.cron) : null;
  return (
    <section className="jobs-preview" aria-labelledby="preview-title" aria-busy={pending}>
      <h3 id="preview-title">Preview</h3>
      <div aria-live="polite">
        {!settled && <p className="muted">Fill in the schedule to see its next fires.</p>}
        {preview.unavailable && <p className="muted">{preview.unavailable}</p>}
        {settled && preview.error && <p className="error jobs-preview-error">{preview.error}</p>}
        {settled && !preview.error && preview.data && (
          <>
            <p className="jobs-preview-description">
              {words && <><strong>{words}</strong> · </>}
              <span className={words ? "mono" : undefined}>{preview.data.description}</span>
            </p>
            <NextFires fires={preview.data.nextFires} zone={zone} caption="The schedule's next fires" />
          </>
        )}
      </div>
    </section>
  );
}

/** A DAG's schedule in words, with the cron expression itself beside it when words were made from it. */
import { cronInWords, scheduleInWords } from "../../ui/cron-words";

export function ScheduleWords({ schedule }: { schedule: { kind: string; cron?: string | null; timezone: string; description: string } }) {
  const words = scheduleInWords(schedule);
  const fromCron = schedule.kind === "CRON" && schedule.cron && cronInWords(schedule.cron);
  return (
    <span className="dag-schedule">
      {words}
      {fromCron && <code className="muted" title={schedule.description}> {schedule.cron}</code>}
    </span>
  );
}

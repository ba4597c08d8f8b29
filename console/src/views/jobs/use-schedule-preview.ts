/**
 * previewSchedule for a schedule input (null: nothing to ask). The API checks it exactly as
 * createJob would: its refusal (e.g. "cron: minute field value 61 is out of range…") is the error.
 */
import { useQuery } from "urql";
import { ConsolePreviewScheduleDocument, type ScheduleInput } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";

export const PREVIEW_FIRES = 6;

export interface PreviewState {
  data: { description: string; nextFires: Array<{ at: string; local: string; dst: string | null }> } | null;
  error: string | null;
  fetching: boolean;
  /** Why there is no preview at all. */
  unavailable: string | null;
}

export function useSchedulePreview(input: ScheduleInput | null): PreviewState {
  const [res] = useQuery({
    query: ConsolePreviewScheduleDocument,
    variables: { schedule: input ?? { kind: "ONCE" }, count: PREVIEW_FIRES },
    pause: !input,
    // "Now" moves: a cached preview of a schedule typed a minute ago would show stale fires.
    requestPolicy: "network-only",
  });
  return {
    data: res.data?.previewSchedule ?? null,
    error: res.error ? errorText(res.error) : null,
    fetching: res.fetching,
    unavailable: null,
  };
}

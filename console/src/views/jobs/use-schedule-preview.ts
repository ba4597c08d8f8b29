/** previewSchedule for a schedule input (null: nothing to ask). */
import type { ScheduleInput } from "../../../../generated/client/graphql";

export interface PreviewState {
  data: { description: string; nextFires: Array<{ at: string; local: string; dst: string | null }> } | null;
  error: string | null;
  fetching: boolean;
  /** Why there is no preview at all (the API has no previewSchedule). */
  unavailable: string | null;
}

export function useSchedulePreview(_input: ScheduleInput | null): PreviewState {
  return { data: null, error: null, fetching: false, unavailable: "The preview needs the API's previewSchedule, which this server does not have yet." };
}

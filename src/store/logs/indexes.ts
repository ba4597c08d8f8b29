/** The indexes of the log collections (created with the others in mongo.ts; TTLs set by retention.ts). */
import type { IndexDescription } from "mongodb";

export const LOG_INDEXES: { runLogs: IndexDescription[]; runLogSegments: IndexDescription[] } = {
  runLogs: [
    // Reads go by (run, claim, offset): one attempt's log in order, from an offset.
    { key: { runId: 1, token: 1, offset: 1 }, name: "run_token_offset" },
    // at_ttl (a live chunk never outlives the log retention, archived or not) is set by
    // store/retention.ts from the settings.
  ],
  runLogSegments: [
    { key: { runId: 1, token: 1 }, name: "run_token" },
    // The archiver's queue: ended (or silent) live logs, oldest first.
    { key: { state: 1, lastWriteAt: 1 }, name: "state_lastWrite" },
    // The retention sweeper's queue: archives past their expiry.
    { key: { state: 1, archiveExpiresAt: 1 }, name: "state_archiveExpiry" },
  ],
};

/** The indexes of the log collections (created with the others in mongo.ts; TTLs set by retention.ts). */
import type { IndexDescription } from "mongodb";

/** A live chunk is dropped this long after it was written at the latest, archived or not (the log retention's default). */
export const DEFAULT_LOG_RETENTION_SECONDS = 30 * 24 * 3600;

export const LOG_INDEXES: { runLogs: IndexDescription[]; runLogSegments: IndexDescription[] } = {
  runLogs: [
    // Reads go by (run, claim, offset): one attempt's log in order, from an offset.
    { key: { runId: 1, token: 1, offset: 1 }, name: "run_token_offset" },
    // Safety net: a live chunk never outlives the log retention, even when it was never archived.
    { key: { at: 1 }, name: "at_ttl", expireAfterSeconds: DEFAULT_LOG_RETENTION_SECONDS },
  ],
  runLogSegments: [
    { key: { runId: 1, token: 1 }, name: "run_token" },
    // The archiver's queue: ended (or silent) live logs, oldest first.
    { key: { state: 1, lastWriteAt: 1 }, name: "state_lastWrite" },
    // The retention sweeper's queue: archives past their expiry.
    { key: { state: 1, archiveExpiresAt: 1 }, name: "state_archiveExpiry" },
  ],
};

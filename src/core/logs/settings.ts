/** The log settings every part of the log path reads (src/config/logs.ts parses them). */
export interface LogSettings {
  /** Most bytes of one attempt's log; past it a SYSTEM marker and the rest dropped. @default 10 MiB */
  maxBytes: number;
  /** An executor writes buffered output at least this often. @default 250 ms */
  flushMs: number;
  /** ... or as soon as this much is buffered. @default 256 KiB */
  flushBytes: number;
  /** Archived logs are deleted this long after their archive. @default 30 days */
  retentionMs: number;
  /** How long a `logUrl` link is valid. @default 5 min */
  urlTtlSeconds: number;
  /** The archiver's sweep period. @default 5 s */
  sweepMs: number;
  /** A live log silent this long is checked: its attempt may have died without ending it. @default 60 s */
  silentMs: number;
}

export const DEFAULT_LOG_SETTINGS: LogSettings = {
  maxBytes: 10 * 1024 * 1024,
  flushMs: 250,
  flushBytes: 256 * 1024,
  retentionMs: 30 * 24 * 3600_000,
  urlTtlSeconds: 300,
  sweepMs: 5_000,
  silentMs: 60_000,
};

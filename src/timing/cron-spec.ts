/** The shape of a parsed cron expression: made by cron.ts (parsing), read by cron-match.ts (matching). */
/** A parsed cron expression. Immutable; cached by normalized text. */
export interface CronSpec {
  /** Normalized text: single spaces, names upper-case, macros lower-case. */
  readonly text: string;
  /** True when the expression has a seconds field (6 fields). */
  readonly hasSeconds: boolean;
  readonly second: readonly boolean[];
  readonly minute: readonly boolean[];
  readonly hour: readonly boolean[];
  /** Index 1–12. */
  readonly month: readonly boolean[];
  readonly dom: DomSpec;
  readonly dow: DowSpec;
}

export interface DomSpec {
  star: boolean;
  /** Index 1–31. */
  days: boolean[];
  /** `L` is `L-0`. */
  fromLast: number[];
  lastWeekday: boolean;
  nearestWeekday: number[];
}

export interface DowSpec {
  star: boolean;
  /** Index 0–6, Sunday = 0. */
  days: boolean[];
  /** `NL`: weekday N, last one in the month. */
  last: number[];
  /** `N#K`. */
  nth: Array<{ weekday: number; k: number }>;
}

/**
 * The pure scheduling-semantics core: what fires when, and what happens to each fire.
 * No I/O and no clock reads: every function takes `now` and randomness as arguments.
 * See docs/scheduling.md for the user-facing semantics.
 */
export { ScheduleError } from "./errors.js";
export {
  DAY,
  formatDuration,
  HOUR,
  humanDuration,
  MAX_DURATION_MS,
  MINUTE,
  parseDuration,
  parsePositiveDuration,
  SECOND,
  WEEK,
  type Millis,
} from "./duration.js";
export { CRON_MACROS, parseCron, type CronSpec } from "./cron.js";
export { GAP_LOOKAHEAD_MS, longestCronGap, type CronGap } from "./cron-gaps.js";
export { badDateTime, DATE_TIME_EXAMPLES, parseDateTimeText } from "./instant.js";
export { canonicalTimeZone, formatLocal, MAX_INSTANT, MIN_INSTANT, offsetAt, transitionsBetween, type Transition } from "./zones.js";
export type { DstGapPolicy, DstRepeatPolicy, DstSkip, DstTag, Slot } from "./dst.js";
export {
  describeSchedule,
  dstSkipsBetween,
  firstSlot,
  MAX_JITTER_MS,
  MAX_PREVIEW,
  MIN_EVERY_MS,
  nextFires,
  nextSlot,
  normalizeSchedule,
  slotsBetween,
  type FirePreview,
  type Schedule,
  type ScheduleInput,
  type ScheduleKind,
} from "./schedule.js";
export { dueAt, spreadOffset } from "./jitter.js";
export {
  DEFAULT_LATE_TOLERANCE_MS,
  DEFAULT_MAX_CATCHUP,
  DEFAULT_MISFIRE_POLICY,
  latestSlot,
  MAX_MISSED_LISTED,
  MISFIRE_POLICIES,
  planMisfire,
  type MisfireArgs,
  type MisfirePlan,
  type MisfirePolicy,
} from "./misfire.js";
export { applyOverlap, decideOverlap, OVERLAP_POLICIES, type OverlapDecision, type OverlapPolicy, type OverlapState } from "./overlap.js";
export {
  DEFAULT_TIMEOUT_MS,
  LOST_EXECUTOR_MIN_ATTEMPTS,
  MAX_ATTEMPTS,
  MAX_EXIT_CODE,
  MAX_RETRY_DELAY_MS,
  MAX_TIMEOUT_MS,
  normalizeRetry,
  normalizeTimeout,
  retryDelay,
  shouldRetry,
  type Backoff,
  type FailureReason,
  type RetryInput,
  type RetryJitter,
  type RetryPolicy,
} from "./retry.js";
export { ledgerProblems, type FireOutcome, type LedgerEntry } from "./ledger.js";
export { nextFire, type NextFire } from "./next-fire.js";
export { canStage, DEFAULT_STAGE_AHEAD_MS, timerDueAt } from "./staging.js";
export {
  decideAdvance,
  decideDueRest,
  decideFire,
  decideStageAhead,
  runOutcome,
  type DueFire,
  type FireCursor,
  type FireDecision,
  type FireJob,
  type FireOptions,
  type JobAdvance,
  type RunRequest,
  type RunResult,
  type StageAhead,
} from "./decide-fire.js";
export { forecastRuns, forecastRunsYielding, type ForecastJob, type ForecastOptions, type ForecastResult, type PoolMinutes } from "./forecast.js";
export { findHotspots, medianOf, type Hotspot, type HotspotOptions } from "./forecast-hotspots.js";

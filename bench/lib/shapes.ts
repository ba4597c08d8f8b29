/**
 * The three benchmark shapes of issue #5 and the result type each side (Kairos, BullMQ) produces for
 * them, so `bench/index.ts` can print both in one table and compute ratios.
 *
 * ## Lateness — one definition for both systems
 *
 *     lateness = startedAt − dueAt        (milliseconds, both read from Date.now() on the same machine)
 *
 * - `startedAt` is the moment the job's code begins: the first statement of the processor / handler,
 *   `Date.now()`. For BullMQ that is the first line of the Worker's processor callback. For Kairos it
 *   is the run's `startedAt` as recorded when the executor starts the run (so the Kairos side reports
 *   `run.startedAt − run.scheduledFor` per run).
 * - `dueAt` is the instant the job was *supposed* to start, decided before anything was enqueued —
 *   never a time the system itself stamps late:
 *   - burst: the common instant T every job was created for (Kairos: `scheduledFor` = T; BullMQ:
 *     `timestamp + delay` = T exactly, since the benchmark sets both job options itself);
 *   - schedules: the slot the schedule's own arithmetic assigned to that fire (Kairos: the slot
 *     `scheduledFor`; BullMQ `every`: `opts.prevMillis + opts.repeat.offset`; BullMQ `pattern`:
 *     `opts.prevMillis`, the cron boundary). A slot the system skipped has no lateness sample at all;
 *     it shows up as `fires < expectedFires` instead;
 *   - throughput: the moment the producer created the work (Kairos: the fire's `scheduledFor`;
 *     BullMQ: the job's `timestamp`, set by `Queue.addBulk` before the round trip to Redis).
 * - Both clocks are the same `Date.now()` of one machine (processes on one host share the clock),
 *   with 1 ms resolution, so a sample of 0 means "within the same millisecond".
 */
import type { Summary } from "./stats.js";

export type System = "kairos" | "bullmq";

/** Fields every result carries besides its figures. */
export interface ResultBase {
  system: System;
  /** Optional short label shown next to the system name, e.g. "every" / "pattern". */
  variant?: string;
  settings: Settings;
  notes?: string[];
}

/** Free-form description of how the system was configured for a run, printed with the figures. */
export type Settings = Record<string, string | number | boolean>;

/** (1) N one-off runs all due at the same instant, a no-op job. */
export interface BurstResult extends ResultBase {
  /** Jobs created. */
  jobs: number;
  /** Jobs whose start was observed before the bench's time bound (== jobs on a good run). */
  started: number;
  /** The common due instant T (epoch ms). */
  dueAt: number;
  /** How far ahead of T creation began (ms). */
  leadMs: number;
  /** Time it took to create all N jobs (ms); must be < leadMs for the figures to mean anything. */
  addMs: number;
  /** Last start − T (ms): "time until all started". */
  allStartedMs: number;
  /** First start − T (ms). */
  firstStartedMs: number;
  /** startedAt − T per job. */
  lateness: Summary;
}

/** (2) S recurring every-second schedules for D seconds. */
export interface ScheduleResult extends ResultBase {
  schedules: number;
  /** Length of the measurement window (ms). Only fires whose due slot lies inside it count. */
  durationMs: number;
  /** Window start (epoch ms). */
  windowStart: number;
  /** Distinct fires observed with a due slot inside the window. */
  fires: number;
  /** schedules × window / period: what a perfect scheduler would have fired inside the window. */
  expectedFires: number;
  /** Same (schedule, slot) started more than once, inside the window (should be 0). */
  duplicates: number;
  /** startedAt − slot, per fire inside the window. */
  lateness: Summary;
}

/** (3) Sustained fire→start throughput with K schedulers / worker processes. */
export interface ThroughputResult extends ResultBase {
  /** Scheduler (Kairos) or Worker-process (BullMQ) count: 1 or 2. */
  workers: number;
  /** Runs started inside the measurement window. */
  runs: number;
  /** Measurement window length (s). */
  seconds: number;
  /** runs / seconds. */
  perSecond: number;
  /** startedAt − dueAt for the runs started inside the window. */
  lateness: Summary;
}

export type BenchResult = BurstResult | ScheduleResult | ThroughputResult;

/**
 * Lease safety ("double billing"): every attempt has a local deadline a safety margin before its
 * lease ends (its claim's, then its node's: node-registry.ts), moved on every renewal. If renewals fail until then (partitioned from MongoDB,
 * frozen, overloaded), the executor kills the attempt itself, so by the time the reaper reclaims
 * the run nothing of the old attempt is still running. Two guards enforce it: the watchdog here,
 * and the supervisor (sandbox/supervisor.ts), a separate process that still kills at the deadline
 * when this one is too slow or frozen to.
 */
import { coerceError } from "../domain/index.js";
import type { RunService } from "../core/index.js";
import { Periodic, type Logger } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import { stopAttempt, type Attempt } from "./attempt.js";
import type { PreparedAttempt } from "./sandbox/sandbox.js";
import { monotonicMs, Supervisor, type SupervisorKill } from "./sandbox/supervisor.js";
import type { BeatResult } from "./node-registry.js";

export interface DeadlinesDeps {
  /** This node (the runs it holds say so). */
  nodeId: string;
  attempts: ReadonlyMap<string, Attempt>;
  runs: RunService;
  clock: Clock;
  log: Logger;
  heartbeatMs: number;
  /** How long an attempt may run after its claim or its last renewal (see options leaseSafeMs). */
  safeMs: number;
}

/** The supervisor's name for an attempt's process. */
export const watchIdOf = (a: Pick<Attempt, "runId" | "token">): string => `${a.runId}:${a.token}`;

/** Every this many heartbeats, the node also reads its runs: lost elsewhere, or asked to cancel (their notices may have been missed). */
const CANCEL_CHECK_EVERY = 3;

export class Deadlines {
  private supervisor: Supervisor | null = null;
  private beats = 0;
  /** The read of the held runs under way, if any (one at a time). */
  private checking: Promise<void> | null = null;
  private watchdog: Periodic | null = null;

  constructor(private readonly deps: DeadlinesDeps) {}

  /** Starts the supervisor (before any attempt is spawned). */
  startSupervisor(): void {
    this.supervisor = new Supervisor(
      (id, why) => this.onSupervisorKill(id, why),
      (message) => this.deps.log.error(message),
    );
    this.supervisor.start();
  }

  /** Starts the watchdog: it kills an attempt at its deadline if renewals kept failing until then. */
  startWatchdog(): void {
    this.watchdog ??= new Periodic(async () => this.enforce(), { everyMs: Math.max(20, Math.floor(this.deps.heartbeatMs / 4)), log: this.deps.log, failure: "deadline watchdog pass failed", cadence: "fixed-rate" });
    this.watchdog.start();
  }

  stopWatchdog(): void {
    void this.watchdog?.stop();
  }

  async stopSupervisor(): Promise<void> {
    await this.supervisor?.stop();
  }

  /** A new attempt's kill deadline. */
  killAtFromNow(): number {
    return this.killAtFrom(this.deps.clock());
  }

  /**
   * The kill deadline of an attempt whose claim was made at `at` (clock ms): a run taken with its
   * payload is claimed when the take ran (its claim marker expires a lease after the time the take
   * was sent with), not when this process got round to starting it.
   */
  killAtFrom(at: number): number {
    return at + this.deps.safeMs;
  }

  /** The supervisor watches the attempt's spawned process: its deadline, and its disk use. */
  watch(watchId: string, pid: number, p: PreparedAttempt, killAt: number): void {
    this.supervisor!.watch(watchId, pid, p.process.stop === "group", this.monotonic(killAt), p.diskBytes, p.diskDir, p.cgroup?.procsFiles[0] ?? null);
  }

  /** Stops watching; the promise settles once the supervisor confirmed (any kill of its own reported by then). */
  forget(watchId: string): Promise<void> {
    return this.supervisor!.forget(watchId);
  }

  /**
   * What a heartbeat sent at `now` did to the node's lease (see NodeRegistry.heartbeat), applied
   * to the attempts. Renewed: every confirmed attempt claimed under that epoch may run until a
   * safe time after `now` (its deadline and the supervisor's move on; never back); one claimed
   * under an earlier epoch (a claim sent just before that epoch was found ended) is stopped.
   * Lost: every attempt claimed under the ended epoch or an earlier one is stopped (`LEASE_LOST`:
   * a scheduler ended the epoch and queues its runs again). Failed: nothing moves, and an attempt
   * is killed at its deadline if no renewal comes by then (the watchdog, the supervisor).
   *
   * Every CANCEL_CHECK_EVERY beats one read of the node's RUNNING runs also stops the attempts
   * whose run is no longer the node's and those asked to cancel (their notices may have been
   * missed), and releases runs the node runs nothing of (RunService.checkHeld); it runs beside the
   * heartbeat, never delaying the next renewal.
   */
  afterBeat(now: number, beat: BeatResult): void {
    if (beat.kind === "failed") return;
    const current = beat.kind === "renewed" ? beat.epoch : beat.ended + 1;
    for (const a of this.deps.attempts.values()) {
      if (a.stop || a.claim.state !== "confirmed") continue;
      const epoch = a.claim.run.nodeEpoch ?? 0;
      if (beat.kind === "renewed" && epoch === beat.epoch) {
        a.killAt = Math.max(a.killAt, now + this.deps.safeMs);
        this.supervisor?.extend(watchIdOf(a), this.monotonic(a.killAt));
      } else if (epoch < current) {
        stopAttempt(a, "LEASE_LOST", `lease lost: this node's lease epoch ${epoch} was ended (its lease lapsed) and the run queued again`);
      }
    }
    if (++this.beats % CANCEL_CHECK_EVERY === 0 && !this.checking) {
      this.checking = this.checkHeld().finally(() => (this.checking = null));
    }
  }

  /** Stops the held attempts whose run is no longer the node's, and those asked to cancel; releases runs it runs nothing of (one read). */
  private async checkHeld(): Promise<void> {
    const held = [...this.deps.attempts.values()].filter((a) => !a.stop && a.claim.state === "confirmed");
    let result: { lost: string[]; cancelled: string[]; released: number };
    try {
      result = await this.deps.runs.checkHeld(this.deps.nodeId, held.map((a) => ({ runId: a.runId, token: a.token })), new Set(this.deps.attempts.keys()));
    } catch (e) {
      this.deps.log.warn({ err: coerceError(e), attempts: held.length }, "could not check the held runs; will retry");
      return;
    }
    if (result.released > 0) this.deps.log.warn({ runs: result.released }, "runs RUNNING on this node with no attempt of it here: recorded lost, queued again");
    const byRun = new Map(held.map((a) => [a.runId, a]));
    for (const id of result.lost) stopAttempt(byRun.get(id)!, "LEASE_LOST", "lease lost: the run was reclaimed or finished elsewhere");
    for (const id of result.cancelled) stopAttempt(byRun.get(id)!, "CANCEL", "cancelled");
  }

  private enforce(): void {
    const now = this.deps.clock();
    for (const a of this.deps.attempts.values()) {
      // An attempt whose program has ended is only reporting its result: nothing left to kill.
      if (!a.stop && a.process.state === "running" && now >= a.killAt) {
        this.deps.log.error({ runId: a.runId }, "could not renew the lease in time; killing the attempt before the lease ends");
        stopAttempt(a, "LEASE_LOST", "lease could not be renewed");
      }
    }
  }

  private onSupervisorKill(watchId: string, why: SupervisorKill): void {
    const a = this.deps.attempts.get(watchId.slice(0, watchId.lastIndexOf(":")));
    if (!a || watchIdOf(a) !== watchId || a.killedBy) return;
    a.killedBy = why;
    if (why === "deadline") this.deps.log.error({ runId: a.runId }, "the supervisor killed an attempt at its lease deadline (the executor did not renew or kill it in time)");
  }

  /** `killAt` (clock ms) on the supervisor's clock (CLOCK_MONOTONIC ms). */
  private monotonic(killAt: number): number {
    return monotonicMs() + (killAt - this.deps.clock());
  }
}

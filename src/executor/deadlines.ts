/**
 * Lease safety ("double billing"): every attempt has a local deadline a safety margin before its
 * lease ends, moved on every renewal. If renewals fail until then (partitioned from MongoDB,
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

export interface DeadlinesDeps {
  /** This node (the runs it holds say so). */
  nodeId: string;
  attempts: ReadonlyMap<string, Attempt>;
  runs: RunService;
  clock: Clock;
  log: Logger;
  leaseMs: number;
  heartbeatMs: number;
  /** How long an attempt may run after its claim or its last renewal (see options leaseSafeMs). */
  safeMs: number;
}

/** The supervisor's name for an attempt's process. */
export const watchIdOf = (a: Pick<Attempt, "runId" | "token">): string => `${a.runId}:${a.token}`;

/** Every this many renewals, the node also reads its runs for cancels (their notices may have been missed). */
const CANCEL_CHECK_EVERY = 3;

export class Deadlines {
  private supervisor: Supervisor | null = null;
  private renewals = 0;
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
   * Renews the lease of every confirmed attempt not being stopped (also of one whose process ended
   * and whose result is still being written) in one write for the node, moving their deadlines; an
   * attempt whose run is no longer the node's (reclaimed or finished elsewhere) is stopped, and so is
   * one whose run was asked to cancel (checked every CANCEL_CHECK_EVERY renewals: cancels come as
   * notices first). `now`: when the renewal was sent (the new deadlines count from then).
   */
  async renewLeases(now: number): Promise<void> {
    const held = [...this.deps.attempts.values()].filter((a) => !a.stop && a.claim.state === "confirmed");
    if (held.length === 0) return;
    const check = ++this.renewals % CANCEL_CHECK_EVERY === 0;
    let result: { renewed: Set<string>; lost: string[]; cancelled: string[] };
    try {
      result = await this.deps.runs.extendLeases(this.deps.nodeId, held.map((a) => ({ runId: a.runId, token: a.token })), this.deps.leaseMs, check);
    } catch (e) {
      this.deps.log.warn({ err: coerceError(e), attempts: held.length }, "lease renewal failed; will retry");
      return;
    }
    const byRun = new Map(held.map((a) => [a.runId, a]));
    for (const a of held) {
      if (!result.renewed.has(a.runId)) continue;
      a.killAt = now + this.deps.safeMs;
      this.supervisor?.extend(watchIdOf(a), this.monotonic(a.killAt));
    }
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

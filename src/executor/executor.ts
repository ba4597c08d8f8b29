/**
 * The executor role: a node that pulls runs from its pools' ready queues only while it has a free
 * slot (back-pressure), claims each with a conditional update that bumps the fencing token, runs
 * it, keeps its lease alive, and reports the result with the token.
 *
 * This class only wires the parts together and starts and stops them:
 * - node-registry.ts: the node document (published capacity, heartbeat, drain, offline);
 * - pull-loop.ts: taking runs from the ready queues and admitting them (capacity.ts: what fits);
 * - attempts.ts: each attempt from start to report (attempt.ts: the states of its life), its
 *   process run in a slot by slot-runner.ts;
 * - confirm-queue.ts: claims of runs started from their payload, confirmed in MongoDB after they
 *   started (entries without a payload, of owners with a concurrency limit, are claimed first);
 * - report.ts: when and what an ended attempt reports (the report gate, late results);
 * - deadlines.ts: lease renewal, the kill deadline, the supervisor;
 * - claim-guard.ts: after a Redis data loss, the claim markers of unconfirmed takes written back.
 */
import type { Logger } from "../support/index.js";
import type { LogSettings, LogWriter, RunService } from "../core/index.js";
import { Channels, type Clock, type SharedState, type Unsubscribe } from "../shared-state/index.js";
import { Periodic, Wakeup } from "../support/index.js";
import { newId, type Mongo } from "../store/index.js";
import { NodeStore } from "../store/index.js";
import type { ArtifactCache } from "./artifact-cache.js";
import type { Attempt } from "./attempt.js";
import { Attempts } from "./attempts.js";
import { Capacity } from "./capacity.js";
import { ClaimGuard } from "./claim-guard.js";
import { ConfirmQueue } from "./confirm-queue.js";
import { Deadlines } from "./deadlines.js";
import { JobKinds } from "./kinds/job-kinds.js";
import { LogShipper } from "./log-capture.js";
import { NodeRegistry } from "./node-registry.js";
import { leaseSafeMs, resolveOptions, type ExecutorOptions, type ResolvedOptions } from "./options.js";
import { PullLoop } from "./pull-loop.js";
import { ReportBackoff, ReportGate, Reporter } from "./report.js";
import { SlotRunner } from "./slot-runner.js";
import { DagTaskIo } from "../dag/index.js";

export type { ExecutorOptions } from "./options.js";

export interface ExecutorDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  /** Uploaded scripts and binaries, fetched and verified by sha256 (null: no blob store on this node). */
  artifacts?: ArtifactCache | null;
  /** Run logs: where the attempts' output goes (absent: only the output tail is kept). */
  logs?: { writer: LogWriter; settings: LogSettings; onEnded?: () => void } | null;
}

export class Executor {
  readonly nodeId = newId();
  private readonly o: ResolvedOptions;
  private state: "idle" | "running" | "draining" | "stopped" = "idle";
  private readonly wakeup = new Wakeup();
  private readonly registry: NodeRegistry;
  private readonly capacity: Capacity;
  private readonly deadlines: Deadlines;
  private readonly slots: SlotRunner;
  private readonly confirms: ConfirmQueue;
  private readonly gate: ReportGate;
  private readonly attempts: Attempts;
  private readonly pull: PullLoop;
  private readonly claimGuard: ClaimGuard;
  private readonly logShipper: LogShipper | null;
  private readonly kinds: JobKinds;
  /** The ready queues whose wake-ups this node listens to: its pools', and their script queues of the interpreters it has. */
  private readonly queues: string[];
  private loopDone: Promise<void> = Promise.resolve();
  /** Fixed rate; a beat still writing when the next is due is not stacked (the store is slow: one write at a time). */
  private heartbeats: Periodic | null = null;
  private unsubs: Unsubscribe[] = [];

  constructor(
    private readonly deps: ExecutorDeps,
    opts: ExecutorOptions,
  ) {
    const o = (this.o = resolveOptions(opts));
    const { runs, clock, log } = deps;
    const nodeId = this.nodeId;
    const wake = () => this.wakeup.wake();
    const safeMs = leaseSafeMs(o);
    const table = new Map<string, Attempt>();
    this.registry = new NodeRegistry(nodeId, new NodeStore(deps.mongo), deps.mongo, log, safeMs);
    this.capacity = new Capacity({ slots: o.slots, reportBacklog: o.reportBacklog, capacity: o.capacity, runMax: o.runMax, fullPauseMs: o.pollMs });
    this.deadlines = new Deadlines({ nodeId, attempts: table, runs, clock, log, heartbeatMs: o.heartbeatMs, safeMs });
    const kinds = (this.kinds = new JobKinds({ interpreters: o.interpreters, httpTargets: o.httpTargets, artifacts: deps.artifacts ?? null }, { mongo: deps.mongo, clock }));
    this.queues = kinds.queues(o.pools);
    this.slots = new SlotRunner({ nodeId, clock, log, deadlines: this.deadlines, kinds, dagIo: new DagTaskIo(deps.mongo) });
    this.confirms = new ConfirmQueue({ runs, clock, log, nodeId, leaseMs: o.leaseMs, delayMs: o.confirmDelayMs, safeMs, lease: this.registry });
    this.gate = new ReportGate(o.reportHoldMs, () => this.state === "running" && !this.capacity.backlogPressing(table.size));
    const backoff = new ReportBackoff();
    const reporter = new Reporter({ runs, clock, log, nodeId, leaseMs: o.leaseMs }, this.gate);
    const { capacity, deadlines, confirms, slots } = this;
    this.logShipper = deps.logs ? new LogShipper({ ...deps.logs, nodeId, log }) : null;
    this.attempts = new Attempts({ table, clock, log, capacity, confirms, deadlines, slots, reporter, backoff, wake, logs: this.logShipper });
    const parts = { capacity, attempts: this.attempts, gate: this.gate, backoff, wakeup: this.wakeup };
    this.claimGuard = new ClaimGuard({ state: deps.state, attempts: table, clock, log });
    this.pull = new PullLoop({ o, interpreters: kinds.interpreters.map((i) => i.name), canRun: (spec) => kinds.canRun(spec), nodeId, state: deps.state, runs, clock, log, ...parts, taking: () => this.state === "running", lease: this.registry });
  }

  get running(): number {
    return this.attempts.size;
  }

  async start(): Promise<void> {
    const sandbox = this.slots.open(this.o);
    await sandbox.ready();
    this.deadlines.startSupervisor();
    this.logShipper?.start();
    await this.registry.register(this.o, sandbox.isolation, new Date(this.deps.clock()), this.kinds.interpreters);
    // A push to any of them wakes the loop; it takes from each pool's queues in one take.
    for (const queue of this.queues) this.unsubs.push(await this.deps.state.bus.subscribe(Channels.readyWake(queue), () => this.wakeup.wake()));
    this.unsubs.push(await this.deps.state.bus.subscribe(Channels.cancel, (msg) => this.onCancel(msg)));
    this.state = "running";
    this.heartbeats = new Periodic(() => this.heartbeat(), { everyMs: this.o.heartbeatMs, log: this.deps.log, failure: "executor heartbeat failed; trying again next beat", cadence: "fixed-rate" });
    this.heartbeats.start();
    this.deadlines.startWatchdog();
    await this.claimGuard.check();
    this.claimGuard.start();
    this.loopDone = this.pull.run();
    this.deps.log.info(
      { nodeId: this.nodeId, name: this.o.nodeName, pools: this.o.pools, interpreters: this.kinds.interpreters.map((i) => i.name), slots: this.o.slots, isolation: sandbox.isolation },
      `executor online; isolation ${sandbox.isolation.mode}: ${sandbox.isolation.enforced.join(", ")}`,
    );
  }

  /**
   * Drains: stops pulling, lets running attempts finish within the grace period, then kills the
   * rest and hands their runs back to the queue (RUNNING → QUEUED with the same attempt number).
   */
  async stop(graceMs = this.o.drainGraceMs): Promise<void> {
    if (this.state === "stopped" || this.state === "idle") return;
    this.state = "draining";
    await this.registry.draining();
    this.wakeup.wake();
    await this.loopDone;
    this.gate.dispatched(false);
    const all = this.attempts.allDone();
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<boolean>((r) => (graceTimer = setTimeout(() => r(true), graceMs)));
    const timedOut = await Promise.race([all.then(() => false), grace]);
    clearTimeout(graceTimer);
    if (timedOut) {
      this.attempts.stopAll("SHUTDOWN", "executor shutting down");
      await all;
    }
    await this.heartbeats?.stop();
    this.deadlines.stopWatchdog();
    this.claimGuard.stop();
    // Every attempt has ended: no confirm is left to send, and their logs' last chunks go now.
    this.confirms.clear();
    await this.logShipper?.stop();
    for (const u of this.unsubs) await u().catch(() => undefined);
    this.unsubs = [];
    await this.deadlines.stopSupervisor();
    await this.slots.close();
    this.kinds.close();
    await this.registry.offline(new Date(this.deps.clock()));
    this.state = "stopped";
    this.deps.log.info({ nodeId: this.nodeId }, "executor stopped");
  }

  private onCancel(msg: string): void {
    try {
      const { runId, reason } = JSON.parse(msg) as { runId: string; reason?: string };
      this.attempts.stop(runId, "CANCEL", reason ?? "cancelled");
    } catch {
      // malformed notice: ignore; the heartbeat also sees cancelRequested
    }
  }

  /**
   * The node's heartbeat: renews its lease, which keeps every attempt it holds alive (one write
   * of one document), then moves or stops the attempts accordingly.
   */
  private async heartbeat(): Promise<void> {
    const now = this.deps.clock();
    const beat = await this.registry.heartbeat(new Date(now), this.attempts.size, this.state === "running", this.o.leaseMs);
    this.deadlines.afterBeat(now, beat);
  }
}

/**
 * The executor role: a node that pulls runs from its pools' ready queues only while it has a free
 * slot (back-pressure), claims each with a conditional update that bumps the fencing token, runs
 * it, keeps its lease alive, and reports the result with the token.
 *
 * Claims: an entry taken from the ready queue with its payload (the run as enqueued) is started
 * at once and its claim confirmed in MongoDB right after, in a batch with other writes: the
 * conditional update that bumps the fencing token, as for any claim. A confirm that is refused
 * (the run was cancelled or changed meanwhile) kills what was started before its result could
 * count; one that cannot be written by the attempt's kill deadline kills it too (the entry's claim
 * marker keeps the reaper from handing the run to anyone else until then). Entries without a
 * payload (owners with a concurrency limit) are claimed in MongoDB first.
 *
 * Lease safety ("double billing"): every attempt has a local deadline a safety margin before its
 * lease ends. If renewals fail until then (partitioned from MongoDB, frozen, overloaded), the
 * executor kills the attempt itself, so by the time the reaper reclaims the run nothing of the
 * old attempt is still running.
 */
import { cpus, freemem, hostname, loadavg, totalmem } from "node:os";
import { coerceError } from "../domain/errors.js";
import type { Logger } from "../log.js";
import { CANCEL_CHANNEL, decodeRunPayload } from "../core/events.js";
import { DEFAULT_RESOURCES, fitsWithin, resourcesOf } from "../core/resources.js";
import type { RunService } from "../core/runs.js";
import { Channels, type Clock, type SharedState, type Unsubscribe } from "../scheduler/ports.js";
import { RunStatus } from "../domain/lifecycle.js";
import { Wakeup } from "../scheduler/wakeup.js";
import { newId, type Mongo } from "../store/mongo.js";
import type { NodeDoc, ResourceRequest, RunDoc, RunUsage } from "../domain/documents.js";
import { RunAbort } from "./abort.js";
import { notStarted, toOutcome } from "./outcome.js";
import { runProcess, type ProcessResult } from "./process.js";
import { Sandbox, type SandboxMode } from "./sandbox/sandbox.js";
import { monotonicMs, Supervisor, type SupervisorKill } from "./sandbox/supervisor.js";

export interface ExecutorOptions {
  nodeName: string;
  pools: string[];
  slots: number;
  /** Directory under which each attempt gets a fresh working directory. */
  workRoot: string;
  /** @default 30 s */
  leaseMs?: number;
  /**
   * Attempts whose process ended but whose claim or result is still being written, at most; half
   * of it held back while the executor is starting due runs (see reportHoldMs). @default 32,768
   */
  reportBacklog?: number;
  /**
   * While every free slot keeps being filled with due runs, results of ended runs wait up to this
   * long (or until half the backlog holds them) and are then written in large batches: during a
   * burst, starting runs on time comes before writing down runs that ended. Their `finishedAt`
   * is when they ended. @default 2 s (at most a tenth of the lease)
   */
  reportHoldMs?: number;
  /**
   * A run taken with its payload is confirmed this long after it started; one that ends sooner
   * reports its claim and its result in one write. @default 1 s (at most a tenth of the lease)
   */
  confirmDelayMs?: number;
  /** Safety poll of the ready queues when no wake-up arrives. @default 1 s */
  pollMs?: number;
  /** Lease renewal and node heartbeat period. @default leaseMs / 3 */
  heartbeatMs?: number;
  /** On stop: how long running attempts may finish before they are handed back. @default 30 s */
  drainGraceMs?: number;
  labels?: Record<string, string>;
  /**
   * How runs are isolated (see sandbox/sandbox.ts). `auto` (dev): bubblewrap where it works, else
   * plain processes with a loud warning. @default bubblewrap
   */
  sandbox?: SandboxMode | "auto";
  /** Slot i runs as uid/gid sandboxUidBase + i. @default 61000 */
  sandboxUidBase?: number;
  /** Extra host paths bound read-only into every sandbox. @default none */
  sandboxRoPaths?: string[];
  /** Host paths bound writable into every sandbox (shared by all jobs on the node). @default none */
  sandboxRwPaths?: string[];
  /** Offer EGRESS network access (sandbox/egress.ts). @default null: not offered */
  sandboxEgress?: { subnet: string; deny: readonly string[] } | null;
  /** CPU and memory the runs of this node may reserve in total. @default cpu: the larger of 2 × cores and slots × the default cpu; memory: all of it */
  capacity?: { cpu: number; memoryMb: number };
  /** What a run of this node's pools gets when its job leaves a resource out. @default core/resources DEFAULT_RESOURCES */
  runDefaults?: ResourceRequest;
  /** The most one run may ask for on this node. @default cpu: cores, memory: all, pids 4096, disk 10 GiB */
  runMax?: ResourceRequest;
}

interface Attempt {
  /**
   * The run as this executor knows it: the stored document once claimed in MongoDB; for a run
   * taken with its payload, until its claim is confirmed, the run as it was enqueued (QUEUED,
   * the previous token: the attempt's own token is `token`). Null while a taken run that ended
   * waits to report: what it reports is decoded from its payload again then (see execute).
   */
  run: RunDoc | null;
  readonly runId: string;
  /** The attempt's fencing token (a taken run's claim bumps the enqueued one by one). */
  token: number;
  abort: RunAbort;
  /** Local kill deadline: lease end minus a safety margin, moved on every successful renewal. */
  killAt: number;
  done: Promise<void>;
  abortKind: "CANCEL" | "LEASE_LOST" | "CLAIM_LOST" | "SHUTDOWN" | null;
  /** The claim is in MongoDB (at once for a claim made there; after the start for one taken with its payload). */
  confirmed: boolean;
  /**
   * Settles true once confirmed, false when the claim was refused or could not be written in
   * time; null while a taken run's confirm is not sent yet.
   */
  confirmation: Promise<boolean> | null;
  /**
   * Taken with its payload (the run as enqueued, which is `run` until the claim is confirmed):
   * the payload, when it started, and whether its confirm is still to be sent.
   */
  taken: { payload: string; startedAt: number; unsent: boolean } | null;
  /** What the run reserved of the node's capacity. */
  resources: ResourceRequest;
  /** Why the supervisor killed it, if it did. */
  killedBy: SupervisorKill | null;
  /** The run's process has ended (its slot is free; the result may still be being written). */
  ended: boolean;
}

export class Executor {
  readonly nodeId = newId();
  private readonly o: Required<ExecutorOptions>;
  private sandbox: Sandbox | null = null;
  private supervisor: Supervisor | null = null;
  /** Slot numbers not running a process (each has its own directories and uid). */
  private readonly freeSlotIds: number[] = [];
  /** CPU and memory reserved by running processes. */
  private readonly allocated = { cpu: 0, memoryMb: 0 };
  /** A taken run did not fit the free capacity: no take until a run ends (or a poll interval passes). */
  private capacityFull = false;
  private capacityPausedUntil = 0;
  private readonly attempts = new Map<string, Attempt>();
  private state: "idle" | "running" | "draining" | "stopped" = "idle";
  private readonly wakeup = new Wakeup();
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private unsubs: Unsubscribe[] = [];
  private poolCursor = 0;
  /** Attempts whose process has not ended yet (the slots in use). */
  private processes = 0;
  /** Takes in flight, and the slots they asked for. */
  private readonly pulls = new Set<Promise<void>>();
  private reserved = 0;
  /** The last take found no due run; the loop sleeps before the next. */
  private drained = false;
  /** The last take failed: one at a time, after a pause, until one succeeds. */
  private pullFailing = false;
  /** The loop is waiting while takes are in flight (a take ending must wake it). */
  private awaitingPulls = false;
  /** Results that could not be written in a row, and until when no run is taken because of them. */
  private reportFailures = 0;
  private pullPausedUntil = 0;
  /** The pull loop is starting runs as fast as slots free up (its last take filled every free slot). */
  private dispatching = false;
  /** Results waiting for the pull loop to pause (see reportTurn): one gate they all wait on. */
  private reportGate: { opened: Promise<void>; open: () => void; timer: NodeJS.Timeout } | null = null;
  /** Taken runs whose claim is to be confirmed, in start order (one timer for all; see startTaken). */
  private toConfirm: Attempt[] = [];
  private toConfirmHead = 0;
  private confirmTimer: NodeJS.Timeout | null = null;
  /** Earliest staged entry over the pools, as the last take saw it: an idle loop sleeps until then. */
  private nextStagedAt: number | null = null;

  constructor(
    private readonly deps: { mongo: Mongo; state: SharedState; runs: RunService; clock: Clock; log: Logger },
    opts: ExecutorOptions,
  ) {
    const leaseMs = opts.leaseMs ?? 30_000;
    this.o = {
      leaseMs,
      pollMs: 1_000,
      heartbeatMs: Math.max(50, Math.floor(leaseMs / 3)),
      drainGraceMs: 30_000,
      reportBacklog: 32_768,
      reportHoldMs: Math.min(2_000, Math.floor(leaseMs / 10)),
      confirmDelayMs: Math.min(1_000, Math.floor(leaseMs / 10)),
      labels: {},
      sandbox: "bubblewrap",
      sandboxUidBase: 61_000,
      sandboxRoPaths: [],
      sandboxRwPaths: [],
      sandboxEgress: null,
      // CPU is a ceiling per run (a CFS quota), not a reservation that could run out: by default
      // every slot may hold a run of the default size, so slots are what limits a node.
      capacity: { cpu: Math.max(cpus().length * 2, opts.slots * (opts.runDefaults ?? DEFAULT_RESOURCES).cpu), memoryMb: Math.floor(totalmem() / 1048576) },
      runDefaults: DEFAULT_RESOURCES,
      runMax: { cpu: cpus().length, memoryMb: Math.floor(totalmem() / 1048576), pids: 4096, diskMb: 10_240 },
      ...opts,
    };
  }

  get running(): number {
    return this.attempts.size;
  }

  async start(): Promise<void> {
    const sandbox = Sandbox.open({
      mode: this.o.sandbox,
      workRoot: this.o.workRoot,
      slots: this.o.slots,
      uidBase: this.o.sandboxUidBase,
      roPaths: this.o.sandboxRoPaths,
      rwPaths: this.o.sandboxRwPaths,
      egress: this.o.sandboxEgress,
      nodeTag: this.nodeId.slice(-8),
      log: this.deps.log,
    });
    this.sandbox = sandbox;
    for (let i = this.o.slots - 1; i >= 0; i--) this.freeSlotIds.push(i);
    this.supervisor = new Supervisor(
      (id, why) => this.onSupervisorKill(id, why),
      (message) => this.deps.log.error(message),
    );
    this.supervisor.start();
    const now = new Date(this.deps.clock());
    const node: NodeDoc = {
      _id: this.nodeId,
      name: this.o.nodeName,
      host: hostname(),
      pid: process.pid,
      pools: this.o.pools,
      labels: this.o.labels,
      capacity: { slots: this.o.slots, cpus: this.o.capacity.cpu, memoryMb: this.o.capacity.memoryMb },
      maxRun: this.o.runMax,
      defaultRun: this.o.runDefaults,
      isolation: sandbox.isolation,
      status: "ONLINE",
      running: 0,
      usage: usage(),
      startedAt: now,
      lastHeartbeatAt: now,
    };
    await this.deps.mongo.c.nodes.insertOne(node);
    for (const pool of this.o.pools) {
      this.unsubs.push(await this.deps.state.bus.subscribe(Channels.readyWake(pool), () => this.wake()));
    }
    this.unsubs.push(await this.deps.state.bus.subscribe(CANCEL_CHANNEL, (msg) => this.onCancel(msg)));
    this.state = "running";
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.o.heartbeatMs);
    this.watchdog = setInterval(() => this.enforceDeadlines(), Math.max(20, Math.floor(this.o.heartbeatMs / 4)));
    this.loopDone = this.pullLoop();
    this.deps.log.info(
      { nodeId: this.nodeId, name: this.o.nodeName, pools: this.o.pools, slots: this.o.slots, isolation: sandbox.isolation },
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
    await this.deps.mongo.c.nodes.updateOne({ _id: this.nodeId }, { $set: { status: "DRAINING" } }).catch(() => undefined);
    this.wake();
    await this.loopDone;
    this.dispatching = false;
    this.releaseReports();
    const all = Promise.all([...this.attempts.values()].map((a) => a.done));
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<boolean>((r) => (graceTimer = setTimeout(() => r(true), graceMs)));
    const timedOut = await Promise.race([all.then(() => false), grace]);
    clearTimeout(graceTimer);
    if (timedOut) {
      for (const a of this.attempts.values()) this.abortAttempt(a, "SHUTDOWN", "executor shutting down");
      await all;
    }
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    // Every attempt has ended: no confirm is left to send.
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    this.confirmTimer = null;
    this.toConfirm = [];
    this.toConfirmHead = 0;
    for (const u of this.unsubs) await u().catch(() => undefined);
    this.unsubs = [];
    await this.supervisor?.stop();
    await this.sandbox?.close();
    await this.deps.mongo.c.nodes
      .updateOne({ _id: this.nodeId }, { $set: { status: "OFFLINE", running: 0, lastHeartbeatAt: new Date(this.deps.clock()) } })
      .catch(() => undefined);
    this.state = "stopped";
    this.deps.log.info({ nodeId: this.nodeId }, "executor stopped");
  }

  private wake(): void {
    this.wakeup.wake();
  }

  private waitForWork(ms: number): Promise<void> {
    return this.wakeup.sleep(ms);
  }

  /**
   * A slot is a run's process: it frees when the process ends, while the claim and the result are
   * still being written (in batches with other runs' writes), so store latency does not idle the
   * slot and a burst of short runs starts at the pace of the processes, not of the writes. The
   * attempts still reporting are bounded by `reportBacklog`, so a slow MongoDB throttles pulling.
   */
  private freeSlots(): number {
    if (this.capacityFull && this.deps.clock() < this.capacityPausedUntil) return 0;
    return Math.min(this.o.slots - this.processes, this.o.slots + this.o.reportBacklog - this.attempts.size);
  }

  /**
   * Pulls while slots are free. Two takes may be in flight, each for slots no other take asked
   * for: while one waits for Redis, slots freed meanwhile are asked for by the next, so a burst of
   * short runs does not leave the executor idle for a round trip per batch.
   */
  private async pullLoop(): Promise<void> {
    while (this.state === "running") {
      const free = this.freeSlots() - this.reserved;
      if (free <= 0 || this.pulls.size >= (this.pullFailing ? 1 : PULLS_IN_FLIGHT) || (this.drained && this.pulls.size > 0)) {
        // Every slot busy: reports may wait for one to free; a full backlog must be written first.
        if (free <= 0 && this.attempts.size >= this.o.slots + this.o.reportBacklog / 2) this.releaseReports();
        // Woken by a freed slot, new work, or (while takes are in flight) a take ending.
        this.awaitingPulls = this.pulls.size > 0;
        await this.waitForWork(this.o.pollMs);
        this.awaitingPulls = false;
        continue;
      }
      const pausedFor = this.pullPausedUntil - this.deps.clock();
      if (pausedFor > 0) {
        await this.waitForWork(pausedFor);
        continue;
      }
      if (this.drained) {
        // The last take found nothing due: sleep until woken (new work, a freed slot) or the next staged entry is due.
        this.drained = false;
        await this.waitForWork(this.idleSleepMs());
        continue;
      }
      this.startPull(free);
    }
    await Promise.all(this.pulls);
  }

  private startPull(free: number): void {
    this.reserved += free;
    let got = -1;
    const pull: Promise<void> = this.pullOnce(free)
      .then(
        (n) => {
          got = n;
          this.pullFailing = false;
          this.dispatching = n === free;
          if (!this.dispatching) this.releaseReports();
          if (n === 0) this.drained = true;
        },
        async (e: unknown) => {
          this.pullFailing = true;
          this.deps.log.error({ err: coerceError(e) }, "pull failed");
          await delay(Math.min(1_000, this.o.pollMs));
        },
      )
      .finally(() => {
        this.reserved -= free;
        this.pulls.delete(pull);
        // An empty take wakes only a loop waiting for it: a pending wake-up would cut the idle
        // sleep that follows short, and the loop would poll an empty queue without pause.
        // Two takes ending in one turn wake it once (a second wake-up would be left pending).
        if (got !== 0 || this.awaitingPulls) {
          this.awaitingPulls = false;
          this.wake();
        }
      });
    this.pulls.add(pull);
  }

  /**
   * Results of ended runs wait here while the pull loop keeps every slot busy with runs that are
   * due: starting work on time comes before writing down work that is done. They go as soon as
   * the loop pauses (queue drained) or after `reportHoldMs`, and at once when half the backlog is
   * used. Confirms of runs still going never wait. A held run is safe: its claim marker in Redis
   * keeps the reaper off it for a lease, and its claim-and-result write is fenced like any other.
   */
  private reportTurn(): Promise<void> | undefined {
    if (!this.dispatching || this.state !== "running" || this.attempts.size >= this.o.slots + this.o.reportBacklog / 2) return undefined;
    if (!this.reportGate) {
      let open!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      this.reportGate = { opened, open, timer: setTimeout(() => this.releaseReports(), this.o.reportHoldMs) };
    }
    return this.reportGate.opened;
  }

  private releaseReports(): void {
    const gate = this.reportGate;
    if (!gate) return;
    this.reportGate = null;
    clearTimeout(gate.timer);
    gate.open();
  }

  /** Until the next staged entry is due (never longer than the safety poll). */
  private idleSleepMs(): number {
    if (this.nextStagedAt === null) return this.o.pollMs;
    return Math.min(this.o.pollMs, Math.max(1, this.nextStagedAt - this.deps.clock()));
  }

  /** Takes up to `free` runs across the pools (round robin) and starts them; returns how many started. */
  private async pullOnce(free: number): Promise<number> {
    let started = 0;
    let nextAt: number | null = null;
    const pools = this.o.pools;
    const { ready } = this.deps.state;
    for (let i = 0; i < pools.length && started < free; i++) {
      const pool = pools[(this.poolCursor + i) % pools.length]!;
      // Both go in one write to Redis; owners are named only when some owner is limited (rare).
      const [got, anyLimited] = await Promise.all([ready.take(pool, free - started, this.deps.clock(), this.o.leaseMs), ready.anyLimited()]);
      if (got.nextAt !== null) nextAt = nextAt === null ? got.nextAt : Math.min(nextAt, got.nextAt);
      const withPayload: Array<{ run: RunDoc; payload: string }> = [];
      const inMongo: string[] = [];
      for (const t of got.taken) {
        if (t.payload === null) {
          inMongo.push(t.runId);
          continue;
        }
        try {
          withPayload.push({ run: decodeRunPayload(t.payload), payload: t.payload });
        } catch (e) {
          this.deps.log.warn({ err: coerceError(e), runId: t.runId }, "unreadable ready-queue payload; claiming the run in MongoDB");
          inMongo.push(t.runId);
        }
      }
      // Owners given a concurrency limit after their runs were queued: their claims take a slot first.
      const limited = anyLimited && withPayload.length ? await ready.limitedAmong([...new Set(withPayload.map((t) => t.run.ownerId))]) : NO_OWNERS;
      const handBack: string[] = [];
      for (const { run, payload } of withPayload) {
        if (limited.has(run.ownerId)) inMongo.push(run._id);
        else if (!this.fitsFree(run)) handBack.push(run._id);
        else {
          this.startTaken(run, payload);
          started++;
        }
      }
      if (handBack.length) {
        // Back to the queue for a node with room (or for this one once a run ends). Runs claimed
        // in MongoDB first (below) are already RUNNING here and start regardless.
        this.capacityFull = true;
        this.capacityPausedUntil = this.deps.clock() + this.o.pollMs;
        for (const runId of handBack) await this.deps.runs.requeueTaken(runId);
      }
      // Runs that are not QUEUED any more (cancelled, or claimed through a replayed entry
      // elsewhere) are simply not among those won.
      if (inMongo.length) {
        for (const run of await this.deps.runs.claimMany(inMongo, this.nodeId, this.o.leaseMs)) {
          this.startAttempt(run, run.fencingToken, true, null);
          started++;
        }
      }
    }
    this.nextStagedAt = nextAt;
    this.poolCursor = (this.poolCursor + 1) % pools.length;
    return started;
  }

  /** Whether a run fits this node: within its per-run maximum and the capacity not yet reserved. */
  private fitsFree(run: RunDoc): boolean {
    const r = resourcesOf(run.spec);
    const cap = this.o.capacity;
    return fitsWithin(r, this.o.runMax) && this.allocated.cpu + r.cpu <= cap.cpu + 1e-9 && this.allocated.memoryMb + r.memoryMb <= cap.memoryMb;
  }

  /**
   * Starts a run taken with its payload at once, and confirms the claim in MongoDB meanwhile
   * (retried on errors until the attempt's kill deadline). The run is reported, and its lease
   * renewed, only once confirmed.
   */
  private startTaken(queued: RunDoc, payload: string): void {
    const startedAt = this.deps.clock();
    const a = this.startAttempt(queued, queued.fencingToken + 1, false, { payload, startedAt, unsent: true });
    // Confirms are sent confirmDelayMs after each start, by one timer for all taken runs.
    this.toConfirm.push(a);
    if (!this.confirmTimer) this.confirmTimer = setTimeout(() => this.sendConfirms(), this.o.confirmDelayMs);
  }

  /** Sends the confirms that are due, and waits for the next one. */
  private sendConfirms(): void {
    this.confirmTimer = null;
    const now = this.deps.clock();
    const queue = this.toConfirm;
    while (this.toConfirmHead < queue.length) {
      const a = queue[this.toConfirmHead]!;
      const taken = a.taken!;
      const dueAt = taken.startedAt + this.o.confirmDelayMs;
      if (dueAt > now) {
        this.confirmTimer = setTimeout(() => this.sendConfirms(), dueAt - now);
        break;
      }
      queue[this.toConfirmHead++] = undefined as unknown as Attempt;
      // Ended before its confirm was due: the claim goes with the result (see execute).
      if (!taken.unsent) continue;
      taken.unsent = false;
      let settle!: (ok: boolean) => void;
      a.confirmation = new Promise<boolean>((r) => (settle = r));
      // Not ended yet, so `run` is still the run as enqueued (execute drops it only at the end).
      void this.confirmTaken(a, a.run!, taken.startedAt, settle);
    }
    if (this.toConfirmHead === queue.length) {
      this.toConfirm = [];
      this.toConfirmHead = 0;
    } else if (this.toConfirmHead > 4_096 && this.toConfirmHead * 2 > queue.length) {
      this.toConfirm = queue.slice(this.toConfirmHead);
      this.toConfirmHead = 0;
    }
  }

  /** Confirms the claim of a taken run, retrying store errors until the attempt's kill deadline. */
  private async confirmTaken(a: Attempt, queued: RunDoc, startedAt: number, settle: (ok: boolean) => void): Promise<void> {
    for (;;) {
      try {
        const confirmed = await this.deps.runs.confirmClaim(queued, this.nodeId, this.o.leaseMs, startedAt);
        if (!confirmed) {
          this.abortAttempt(a, "CLAIM_LOST", "the run was cancelled, changed or claimed elsewhere before this executor confirmed its claim");
          return settle(false);
        }
        a.run = a.abortKind === "CANCEL" ? { ...confirmed, cancelRequested: true } : confirmed;
        a.token = confirmed.fencingToken;
        a.killAt = this.deps.clock() + this.leaseSafeMs();
        a.confirmed = true;
        return settle(true);
      } catch (e) {
        if (a.abortKind === "LEASE_LOST" || this.deps.clock() >= a.killAt) return settle(false);
        this.deps.log.warn({ err: coerceError(e), runId: queued._id }, "could not confirm a claim; retrying");
        await delay(200);
      }
    }
  }

  private startAttempt(run: RunDoc, token: number, confirmed: boolean, taken: Attempt["taken"]): Attempt {
    const attempt: Attempt = {
      run,
      runId: run._id,
      token,
      abort: new RunAbort(),
      killAt: this.deps.clock() + this.leaseSafeMs(),
      done: DONE,
      abortKind: null,
      confirmed,
      confirmation: confirmed ? CONFIRMED : null,
      taken,
      resources: resourcesOf(run.spec),
      killedBy: null,
      ended: false,
    };
    this.attempts.set(run._id, attempt);
    this.processes++;
    this.allocated.cpu += attempt.resources.cpu;
    this.allocated.memoryMb += attempt.resources.memoryMb;
    attempt.done = this.runAttempt(attempt);
    return attempt;
  }

  private async runAttempt(a: Attempt): Promise<void> {
    try {
      await this.execute(a);
      this.reportFailures = 0;
    } catch (e) {
      // The store (or Redis) refused the result: stop taking runs for a while, longer each time,
      // rather than run queued work whose results cannot be written (it would run again later).
      this.reportFailures++;
      const pauseMs = Math.min(REPORT_FAILURE_PAUSE_MAX_MS, REPORT_FAILURE_PAUSE_MS * 2 ** Math.min(this.reportFailures - 1, 6));
      this.pullPausedUntil = Math.max(this.pullPausedUntil, this.deps.clock() + pauseMs);
      this.deps.log.error({ err: coerceError(e), runId: a.runId, pauseMs }, "attempt failed to report; not taking runs for a while");
    } finally {
      this.attempts.delete(a.runId);
      this.wake();
    }
  }

  /** Kill this long before the lease ends if renewals keep failing. */
  private leaseSafeMs(): number {
    return Math.max(10, this.o.leaseMs - Math.max(this.o.heartbeatMs, Math.floor(this.o.leaseMs / 5)));
  }

  private async execute(a: Attempt): Promise<void> {
    const { runId, token } = a;
    const { jobId, attempt } = a.run!;
    // Made only when something is logged (most attempts log nothing at the default levels' cost).
    let child: Logger | undefined;
    const log = () => (child ??= this.deps.log.child({ runId, jobId, attempt, token }));
    let result: ProcessResult;
    let usage: RunUsage | null = null;
    let oomKilled = false;
    let endedAt = 0;
    const slot = this.freeSlotIds.pop()!;
    const supervisor = this.supervisor!;
    const watchId = `${runId}:${token}`;
    let prepared: ReturnType<Sandbox["prepare"]> | null = null;
    try {
      prepared = this.prepareRun(a, slot);
      const p = prepared;
      result = await runProcess(
        {
          ...p.process,
          timeoutMs: a.run!.spec.timeoutMs,
          onSpawn: (pid) => supervisor.watch(watchId, pid, p.process.stop === "group", this.monotonicDeadline(a.killAt), p.diskBytes, p.diskDir, p.cgroup?.procsFiles[0] ?? null),
        },
        a.abort,
      );
    } catch (e) {
      // Setting the attempt up failed (a cgroup could not be made ...): this run fails, not the node.
      result = notStarted(`could not set up the run's sandbox: ${coerceError(e).message}`);
    } finally {
      a.ended = true;
      endedAt = this.deps.clock();
      supervisor.forget(watchId);
      if (prepared?.cgroup) {
        const u = prepared.cgroup.usage();
        usage = { peakMemoryMb: u.peakMemoryMb, cpuSeconds: u.cpuSeconds };
        oomKilled = u.oomKilled;
        prepared.cgroup.killAll();
        prepared.cgroup.remove();
      }
      await this.sandbox!.releaseSlot(slot)?.catch((e) => this.deps.log.error({ err: coerceError(e), slot }, "could not reset a slot's directories"));
      this.freeSlotIds.push(slot);
      this.processes--;
      this.allocated.cpu -= a.resources.cpu;
      this.allocated.memoryMb -= a.resources.memoryMb;
      this.capacityFull = false;
      this.wake(); // the slot is free
    }
    // Ended before its confirm was sent: the claim goes with the result, in one write (after the
    // report turn below, still well inside the attempt's kill deadline).
    const unsent = a.taken?.unsent ? a.taken : null;
    if (unsent) {
      unsent.unsent = false;
      // While held, the result keeps the payload (one string) rather than the decoded run: a burst
      // holds thousands, and every object they keep is copied by each young-generation GC.
      a.run = null;
    }
    await this.reportTurn();
    if (!unsent && !(await a.confirmation!)) {
      log().warn({ reason: a.abortKind === "CLAIM_LOST" ? "claim refused" : "claim not confirmed in time" }, "attempt killed: its claim was not confirmed; result not reported");
      return;
    }
    // The supervisor enforced the lease deadline (this process was too slow or frozen to do it).
    if (!a.abortKind && a.killedBy === "deadline") a.abortKind = "LEASE_LOST";
    if (a.abortKind === "LEASE_LOST") {
      log().warn({ reason: result.abortReason }, "attempt killed: lease lost; result not reported");
      return;
    }
    if (a.abortKind === "SHUTDOWN" && unsent) {
      // Never claimed in the store: the run is QUEUED there; back to the queue, with a new token.
      await this.deps.runs.requeueTaken(runId);
      log().info("attempt handed back on shutdown");
      return;
    }
    if (a.abortKind === "SHUTDOWN") {
      const back = await this.deps.runs.transition(runId, RunStatus.QUEUED, {
        from: [RunStatus.RUNNING],
        token,
        set: { nodeId: null, leaseUntil: null, queuedAt: new Date(this.deps.clock()) },
        reason: "handed back: executor shut down",
        attempt,
      });
      if (back) await this.deps.runs.enqueue(back);
      log().info("attempt handed back on shutdown");
      return;
    }
    const outcome = toOutcome(result, { cancelled: a.abortKind === "CANCEL", oomKilled, diskFull: a.killedBy === "disk", resources: a.resources }, endedAt, usage);
    const done = unsent
      ? await this.deps.runs.finishTaken(decodeRunPayload(unsent.payload), this.nodeId, this.o.leaseMs, unsent.startedAt, outcome)
      : await this.deps.runs.finishAttempt(a.run!, outcome);
    if (!done) log().warn({ outcome: outcome.kind }, "result refused: fencing token is stale (the run was reclaimed)");
    else if (this.deps.log.isLevelEnabled("info")) log().info({ status: done.status, exitCode: result.exitCode, ms: result.durationMs }, "attempt finished");
  }

  /** The attempt's sandbox in `slot`: its program, environment, limits and directories. */
  private prepareRun(a: Attempt, slot: number): ReturnType<Sandbox["prepare"]> {
    const run = a.run!;
    const kairosEnv = {
      KAIROS_RUN_ID: run._id,
      KAIROS_JOB_ID: run.jobId,
      KAIROS_ATTEMPT: String(run.attempt),
      KAIROS_FENCING_TOKEN: String(a.token),
      KAIROS_SCHEDULED_FOR: run.scheduledFor.toISOString(),
      KAIROS_NODE_ID: this.nodeId,
    };
    return this.sandbox!.prepare(slot, `${run._id}-${a.token}`, run.spec, kairosEnv, a.resources);
  }

  /** `killAt` (clock ms) on the supervisor's clock (CLOCK_MONOTONIC ms). */
  private monotonicDeadline(killAt: number): number {
    return monotonicMs() + (killAt - this.deps.clock());
  }

  private onSupervisorKill(watchId: string, why: SupervisorKill): void {
    const a = this.attempts.get(watchId.slice(0, watchId.lastIndexOf(":")));
    if (!a || `${a.runId}:${a.token}` !== watchId || a.killedBy) return;
    a.killedBy = why;
    if (why === "deadline") this.deps.log.error({ runId: a.runId }, "the supervisor killed an attempt at its lease deadline (the executor did not renew or kill it in time)");
  }

  private abortAttempt(a: Attempt, kind: NonNullable<Attempt["abortKind"]>, reason: string): void {
    if (a.abortKind) return;
    a.abortKind = kind;
    // The copy the result is reported from says what the stored run says (see RunService.transition `batchedFrom`).
    if (kind === "CANCEL" && a.run) a.run = { ...a.run, cancelRequested: true };
    a.abort.abort(new Error(reason));
  }

  private onCancel(msg: string): void {
    try {
      const { runId, reason } = JSON.parse(msg) as { runId: string; reason?: string };
      const a = this.attempts.get(runId);
      if (a) this.abortAttempt(a, "CANCEL", reason ?? "cancelled");
    } catch {
      // malformed notice: ignore; the heartbeat also sees cancelRequested
    }
  }

  private enforceDeadlines(): void {
    const now = this.deps.clock();
    for (const a of this.attempts.values()) {
      // An attempt whose program has ended is only reporting its result: nothing left to kill.
      if (!a.abortKind && !a.ended && now >= a.killAt) {
        this.deps.log.error({ runId: a.runId }, "could not renew the lease in time; killing the attempt before the lease ends");
        this.abortAttempt(a, "LEASE_LOST", "lease could not be renewed");
      }
    }
  }

  private async heartbeat(): Promise<void> {
    const now = this.deps.clock();
    await Promise.all(
      [...this.attempts.values()].map(async (a) => {
        if (a.abortKind || !a.confirmed) return;
        try {
          const renewed = await this.deps.runs.extendLease(a.runId, a.token, this.o.leaseMs);
          if (!renewed) return this.abortAttempt(a, "LEASE_LOST", "lease lost: the run was reclaimed or finished elsewhere");
          a.killAt = now + this.leaseSafeMs();
          this.supervisor?.extend(`${a.runId}:${a.token}`, this.monotonicDeadline(a.killAt));
          if (renewed.cancelRequested) this.abortAttempt(a, "CANCEL", "cancelled");
        } catch (e) {
          this.deps.log.warn({ err: coerceError(e), runId: a.runId }, "lease renewal failed; will retry");
        }
      }),
    );
    await this.deps.mongo.c.nodes
      .updateOne(
        { _id: this.nodeId },
        { $set: { lastHeartbeatAt: new Date(now), running: this.attempts.size, usage: usage(), ...(this.state === "running" ? { status: "ONLINE" } : {}) } },
      )
      .catch((e) => this.deps.log.warn({ err: coerceError(e) }, "node heartbeat failed"));
  }
}

function usage(): NodeDoc["usage"] {
  const load1 = loadavg()[0] ?? 0;
  return {
    cpuPercent: Math.min(100, Math.round((load1 / Math.max(1, cpus().length)) * 100)),
    memoryMb: Math.round((totalmem() - freemem()) / 1048576),
    load1: Math.round(load1 * 100) / 100,
  };
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const NO_OWNERS: ReadonlySet<string> = new Set();
const DONE: Promise<void> = Promise.resolve();
/** No runs are taken for this long after a result could not be written, doubling up to the max. */
const REPORT_FAILURE_PAUSE_MS = 500;
const REPORT_FAILURE_PAUSE_MAX_MS = 10_000;
/** Takes from the ready queues in flight at once (see Executor.pullLoop). */
const PULLS_IN_FLIGHT = 2;
const CONFIRMED: Promise<boolean> = Promise.resolve(true);


/**
 * The DAG engine, built once per process by app/services.ts: the advancer (which core's run
 * machinery calls when a task's run ends), the events, the user-facing service and the sweeper.
 */
import type { ArtifactLookup, DagFireHook, DagPort, JobService, RunService } from "../../core/index.js";
import type { RunDoc, RunStatus } from "../../domain/index.js";
import { coerceError } from "../../domain/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import type { Mongo } from "../../store/index.js";
import { DagAdvancer } from "./advance.js";
import { DagDefinitions } from "./definitions.js";
import { DagEvents } from "./events.js";
import { DagSchedules } from "./schedules.js";
import { StagedDagRuns } from "./staged.js";
import { DagRunService } from "./run-service.js";
import { DagService } from "./service.js";
import { DefinitionRetention, type DefinitionRetentionOptions } from "./retention.js";
import { DagSweeper, type SweeperOptions } from "./sweeper.js";

export interface DagEngineDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  /** For scheduled DAGs' timer jobs. */
  jobs: JobService;
  clock: Clock;
  log: Logger;
  defaultCatchupWindowMs: number;
  /** When the sweeper looks again at a RUNNING DAG run nothing wrote. @default 5 s */
  sweepAfterMs?: number;
  /** Resolves the artifacts tasks' SCRIPT and BINARY specs name (the jobs' lookup). */
  artifacts?: ArtifactLookup | null;
  /** Charges a mapped task's instances to their owner's submission budget (AdvancerDeps.chargeRuns). */
  chargeRuns?: (ownerId: string, runs: number) => Promise<void>;
}

export class DagEngine implements DagPort {
  readonly events: DagEvents;
  readonly advancer: DagAdvancer;
  /** DAGs: create, change, delete, pause, resume, read. */
  readonly service: DagService;
  /** DAG runs: trigger, backfill, cancel, retry, read. */
  readonly dagRuns: DagRunService;
  readonly schedules: DagSchedules;
  /** DAG definitions by version, read once per process (shared by the advance, triggers and fires). */
  readonly definitions: DagDefinitions;
  /** Scheduled DAG runs staged ahead of their time, taken back when their DAG changes first. */
  readonly staged: StagedDagRuns;
  private readonly sweepAfterMs: number;

  constructor(private readonly deps: DagEngineDeps) {
    this.sweepAfterMs = deps.sweepAfterMs ?? 5_000;
    this.events = new DagEvents(deps.state.bus);
    this.definitions = new DagDefinitions(deps.mongo);
    this.advancer = new DagAdvancer({
      mongo: deps.mongo,
      definitions: this.definitions,
      runs: deps.runs,
      clock: deps.clock,
      log: deps.log,
      events: this.events,
      sweepAfterMs: this.sweepAfterMs,
      onFinished: (run) => this.schedules.finished(run),
      chargeRuns: deps.chargeRuns,
    });
    this.schedules = new DagSchedules({
      mongo: deps.mongo,
      definitions: this.definitions,
      jobs: deps.jobs,
      runs: deps.runs,
      clock: deps.clock,
      log: deps.log,
      advancer: this.advancer,
      sweepAfterMs: this.sweepAfterMs,
      cancel: async (id) => {
        await this.dagRuns.requestCancel(id);
      },
    });
    this.staged = new StagedDagRuns({ mongo: deps.mongo, state: deps.state, runs: deps.runs, clock: deps.clock, log: deps.log, advancer: this.advancer });
    this.dagRuns = new DagRunService({
      mongo: deps.mongo,
      definitions: this.definitions,
      clock: deps.clock,
      log: deps.log,
      advancer: this.advancer,
      schedules: this.schedules,
      sweepAfterMs: this.sweepAfterMs,
      waiting: deps.runs.waiting,
    });
    this.service = new DagService({
      mongo: deps.mongo,
      clock: deps.clock,
      log: deps.log,
      schedules: this.schedules,
      dagRuns: this.dagRuns,
      defaultCatchupWindowMs: deps.defaultCatchupWindowMs,
      artifacts: deps.artifacts ?? null,
    });
  }

  /** DagPort: a task instance's run ended; its DAG run advances. Never throws (the sweeper covers a failure). */
  async taskEnded(run: RunDoc): Promise<void> {
    if (!run.dagRunId) return;
    await this.advancer.advance(run.dagRunId, run).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: run.dagRunId }, "DAG run advance failed; the sweeper will retry"));
  }

  /** DagPort: a task instance's run is being written to the final status `to` by its executor; its DAG run is read meanwhile. */
  taskEnding(run: RunDoc, to: RunStatus): void {
    if (run.dagRunId) this.advancer.prefetch(run.dagRunId, { ...run, status: to });
  }

  /** The scheduler role's sweeper. */
  sweeper(opts: Partial<SweeperOptions> = {}): DagSweeper {
    return new DagSweeper(
      { mongo: this.deps.mongo, clock: this.deps.clock, log: this.deps.log, advancer: this.advancer, repairLocks: () => this.schedules.repairLocks() },
      { everyMs: opts.everyMs ?? 1_000, sweepAfterMs: opts.sweepAfterMs ?? this.sweepAfterMs, batch: opts.batch ?? 200, idleFullEveryMs: opts.idleFullEveryMs ?? 10 * 60_000 },
    );
  }

  /** The scheduler role's retention of DAG definitions no DAG run reads any more (finished DAG runs expire by a TTL index). */
  definitionRetention(opts: Partial<DefinitionRetentionOptions> = {}): DefinitionRetention {
    return new DefinitionRetention(
      { mongo: this.deps.mongo, clock: this.deps.clock, log: this.deps.log },
      { everyMs: opts.everyMs ?? 10 * 60_000, batch: opts.batch ?? 200, graceMs: opts.graceMs ?? 60 * 60_000 },
    );
  }

  /** DagPort: a fire of a scheduled DAG's timer job (see DagSchedules.fire). */
  readonly fire: DagFireHook = (job, fire, lock) => this.schedules.fire(job, fire, lock);
}

/**
 * The alert engine: a periodic pass (the scheduler role, on the owner of shard 0 only) that finds
 * what happened (scanner.ts), groups it into deliveries and sends them (dispatcher.ts). Every
 * step is durable in MongoDB and safe to repeat, so a crash or a handover of shard 0 loses no alert
 * and doubles none (docs/alerts.md, docs/decisions.md).
 */
import type { AlertRuleDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { allAlertRules, ensureAlertIndexes, type Mongo } from "../../store/index.js";
import type { AlertBus } from "./bus.js";
import { AlertDispatcher } from "./dispatcher.js";
import type { AlertSender } from "./sender.js";
import { AlertScanner } from "./scanner.js";

/** Most rules the engine reads. */
const MAX_RULES = 100_000;

export interface AlertEngineOptions {
  /** How often a pass runs. @default 1 s */
  passMs: number;
  /** How far behind now the scans of runs and fires read. @default 5 s */
  lagMs: number;
  /** A rule's deliveries are at least this far apart; what comes in between is grouped. @default 30 s */
  groupWindowMs: number;
}

export interface AlertEngineDeps {
  mongo: Mongo;
  clock: Clock;
  log: Logger;
  sender: AlertSender;
  bus: AlertBus;
  /** Whether this process runs the engine now (the owner of shard 0). */
  leader: () => boolean;
}

export class AlertEngine {
  private readonly scanner: AlertScanner;
  private readonly dispatcher: AlertDispatcher;
  private loop: Periodic | null = null;
  private indexed: Promise<void> | null = null;
  private readonly passMs: number;

  constructor(
    private readonly deps: AlertEngineDeps,
    options: AlertEngineOptions,
  ) {
    this.scanner = new AlertScanner({ mongo: deps.mongo, options: { lagMs: options.lagMs } });
    this.dispatcher = new AlertDispatcher({ mongo: deps.mongo, clock: deps.clock, log: deps.log, sender: deps.sender, bus: deps.bus, groupWindowMs: options.groupWindowMs });
    this.passMs = options.passMs;
  }

  start(): void {
    this.loop = new Periodic(() => this.pass(), { everyMs: this.passMs, log: this.deps.log, failure: "alert pass failed", cadence: "after-end", level: "error" });
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = null;
    await this.dispatcher.drain();
  }

  /** One pass when this process leads: scan, group, send. */
  async pass(): Promise<void> {
    if (!this.deps.leader()) return;
    await (this.indexed ??= ensureAlertIndexes(this.deps.mongo));
    const rules: AlertRuleDoc[] = await allAlertRules(this.deps.mongo, MAX_RULES);
    // No rule: one read a second and nothing else (deliveries of rules deleted since are dropped with them).
    if (rules.length === 0) return;
    const now = this.deps.clock();
    await this.scanner.pass(rules, now);
    await this.dispatcher.pass(new Map(rules.map((r) => [r._id, r])));
  }
}

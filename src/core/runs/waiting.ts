/**
 * The per-user bound on runs waiting to start (`KAIROS_MAX_WAITING_RUNS`, docs/decisions.md,
 * "A bound on each user's runs waiting to start"): a user's runs in QUEUED (staged ahead of
 * their time and parked by the user's concurrency limit included) or PENDING (held by an overlap
 * lock). The scheduler skips a slot of an owner at the bound (SKIPPED_BACKLOG); the API refuses a
 * call that would take the owner over it (RESOURCE_EXHAUSTED).
 *
 * Counted in MongoDB (index `owner_status_scheduled`, by its prefix; at most the bound), at
 * most once per owner per {@link WAITING_COUNT_TTL_MS} per process: between two counts, the
 * runs this process made are added to the last count, and the runs it is making (the
 * scheduler's slots under way) are reserved, so a burst of fires of one owner in one process
 * never goes past the bound. Runs made by other processes since the last count, and runs that
 * started or ended since, are not seen until the next count: across processes the bound may be
 * overshot by what they make in that time, and a drained backlog is seen up to that long late.
 */
import { LimitReachedError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { countWaitingRuns } from "../../store/index.js";

/** How long a count of an owner's waiting runs is used (plus what this process made since). */
export const WAITING_COUNT_TTL_MS = 1_000;

/** Owners kept before the expired ones are dropped. */
const PRUNE_AT = 10_000;

interface Owner {
  /** Runs this process made (added) for the owner since it was first seen: a running total. */
  added: number;
  /** Slots under way (reserved, not yet made or given up). */
  reserved: number;
  /** The last count: what MongoDB answered, the `added` total when it was asked, and when. */
  base: number;
  snap: number;
  at: number;
  /** A count under way, shared by every caller for the owner meanwhile. */
  reading: Promise<void> | null;
}

export interface WaitingRunsDeps {
  mongo: Mongo;
  clock: Clock;
  /** The bound; null: no bound (`off`), nothing is counted. */
  max: number | null;
  /** @default WAITING_COUNT_TTL_MS */
  ttlMs?: number;
  /** The count (tests); @default countWaitingRuns on `mongo` */
  count?: (ownerId: string, max: number) => Promise<number>;
}

export class WaitingRuns {
  readonly max: number | null;
  private readonly owners = new Map<string, Owner>();
  private readonly ttlMs: number;
  private readonly count: (ownerId: string, max: number) => Promise<number>;

  constructor(private readonly deps: WaitingRunsDeps) {
    this.max = deps.max;
    this.ttlMs = deps.ttlMs ?? WAITING_COUNT_TTL_MS;
    this.count = deps.count ?? ((ownerId, max) => countWaitingRuns(deps.mongo, ownerId, max));
  }

  /**
   * The owner's runs waiting to start as this process knows them: the last count (at most the
   * bound), the runs made here since, and the slots under way here. 0 without a bound.
   */
  async of(ownerId: string): Promise<number> {
    if (this.max === null) return 0;
    const o = await this.fresh(ownerId);
    return o.base + (o.added - o.snap) + o.reserved;
  }

  /**
   * A slot about to make `runs` runs for the owner (the scheduler: one, or a scheduled DAG's first
   * tasks): reserved when they fit under the bound (give them back with {@link release} once the
   * runs are made or not), else the count that refused them (reservations under way included).
   */
  async reserve(ownerId: string, runs = 1): Promise<{ ok: true } | { ok: false; waiting: number }> {
    if (this.max === null || runs <= 0) return { ok: true };
    const o = await this.fresh(ownerId);
    // Synchronous from the check to the reservation: concurrent slots of one owner in this process see each other.
    const waiting = o.base + (o.added - o.snap) + o.reserved;
    if (waiting + runs > this.max) return { ok: false, waiting };
    o.reserved += runs;
    return { ok: true };
  }

  /** Gives back a reservation (the runs it was for are made, and {@link added}, or were not made). */
  release(ownerId: string, runs = 1): void {
    if (this.max === null || runs <= 0) return;
    const o = this.owners.get(ownerId);
    if (o) o.reserved = Math.max(0, o.reserved - runs);
  }

  /** Runs this process just made waiting for the owner (Materializer): counted until the next count sees them. */
  added(ownerId: string, runs = 1): void {
    if (this.max === null) return;
    const o = this.owners.get(ownerId);
    if (o) o.added += runs;
  }

  /**
   * The API's check before a call makes `runs` runs (or puts them back in the queue) for the
   * owner: RESOURCE_EXHAUSTED when the owner's waiting runs and these would be more than the bound.
   */
  async admit(ownerId: string, runs: number): Promise<void> {
    if (this.max === null || runs <= 0) return;
    const waiting = await this.of(ownerId);
    if (waiting + runs <= this.max) return;
    const these = runs === 1 ? "this run" : `these ${runs} runs`;
    throw new LimitReachedError(
      `too many runs waiting to start: the owner has ${waiting >= this.max ? `${this.max} or more` : waiting} runs waiting (QUEUED or PENDING), and ${these} would take it over ` +
        `the bound of ${this.max} (KAIROS_MAX_WAITING_RUNS); wait for some to start, or cancel some (cancelRun, or pause or delete the jobs making them)`,
    );
  }

  /** The owner's record with a count at most ttl old (counting once for every caller meanwhile). */
  private async fresh(ownerId: string): Promise<Owner> {
    const now = this.deps.clock();
    let o = this.owners.get(ownerId);
    if (!o) {
      if (this.owners.size >= PRUNE_AT) this.prune(now);
      o = { added: 0, reserved: 0, base: 0, snap: 0, at: -Infinity, reading: null };
      this.owners.set(ownerId, o);
    }
    const age = now - o.at;
    if (age >= 0 && age < this.ttlMs) return o;
    if (!o.reading) {
      const rec = o;
      const snap = rec.added;
      rec.reading = this.count(ownerId, this.max!)
        .then((n) => {
          // Runs made while the count was under way are added to it: some may be counted twice
          // (the count saw them) until the next count; none is missed.
          rec.base = n;
          rec.snap = snap;
          rec.at = now;
        })
        .finally(() => {
          rec.reading = null;
        });
    }
    await o.reading;
    return o;
  }

  /** Drops owners with nothing under way whose count has expired. */
  private prune(now: number): void {
    for (const [id, o] of this.owners) {
      if (o.reserved === 0 && !o.reading && !(now - o.at >= 0 && now - o.at < this.ttlMs)) this.owners.delete(id);
    }
  }
}

import type { Clock } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { findRunLimit } from "../../store/index.js";

/** How long a user's maxConcurrentRuns is cached per process for the claim path. */
const LIMIT_CACHE_MS = 2_000;

/** Users' `maxConcurrentRuns`, cached briefly: every enqueue and claim asks. */
export class UserLimits {
  private readonly cache = new Map<string, { limit: number | null; at: number }>();
  /** Reads under way, by owner: a burst of enqueues and claims for one owner reads once, not once each. */
  private readonly reading = new Map<string, Promise<number | null>>();

  constructor(
    private readonly mongo: Mongo,
    private readonly clock: Clock,
  ) {}

  /** The owner's limit; null when they have none (or are gone). */
  async of(ownerId: string): Promise<number | null> {
    const now = this.clock();
    const hit = this.cache.get(ownerId);
    if (hit && now - hit.at >= 0 && now - hit.at < LIMIT_CACHE_MS) return hit.limit;
    let read = this.reading.get(ownerId);
    if (!read) {
      read = findRunLimit(this.mongo, ownerId).then((limit) => {
        this.cache.set(ownerId, { limit, at: now });
        return limit;
      });
      const forget = () => this.reading.delete(ownerId);
      read.then(forget, forget);
      this.reading.set(ownerId, read);
    }
    return read;
  }
}

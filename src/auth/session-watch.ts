/**
 * Keeps long-lived connections honest: every `everyMs` it re-checks the caller of each open
 * connection (expiry, revocation, user deleted or disabled, API key revoked or expired) and closes
 * the ones that are no longer valid, with the reason. One timer for all connections, running only
 * while there are some; checks go through the authenticator's caches, so a pass costs at most one
 * query per user (or key) per cache period. Knows no transport: it is given a close function.
 */
import { Periodic, type Logger } from "../support/index.js";
import type { Authenticator, Caller } from "./authenticator.js";

/** How often open connections are re-checked. @default 1 s */
export const DEFAULT_RECHECK_MS = 1_000;

interface Watched {
  caller: Caller;
  close: (reason: string) => void;
}

export class SessionWatch {
  private readonly watched = new Set<Watched>();
  /** Fixed rate, a slow pass (store down) skipped rather than stacked; runs only while something is watched. */
  private readonly loop: Periodic;

  constructor(private readonly deps: { auth: Authenticator; log: Logger; everyMs?: number }) {
    this.loop = new Periodic(() => this.check(), {
      everyMs: deps.everyMs ?? DEFAULT_RECHECK_MS,
      log: deps.log,
      failure: "could not re-check open connections; trying again next time",
      cadence: "fixed-rate",
      unref: true,
    });
  }

  /** Watches one connection until the returned function is called (connection closed) or it is closed here. */
  watch(caller: Caller, close: (reason: string) => void): () => void {
    const entry: Watched = { caller, close };
    this.watched.add(entry);
    this.loop.start();
    return () => this.forget(entry);
  }

  private forget(entry: Watched): void {
    this.watched.delete(entry);
    if (this.watched.size === 0) void this.loop.stop();
  }

  private async check(): Promise<void> {
    await Promise.all(
      [...this.watched].map(async (entry) => {
        const reason = await this.deps.auth.invalidReason(entry.caller).catch(() => null); // store errors: keep, ask again next pass
        if (reason === null || !this.watched.has(entry)) return;
        this.forget(entry);
        this.deps.log.info({ userId: entry.caller.userId, reason }, "closing a connection whose credentials are no longer valid");
        entry.close(reason);
      }),
    );
  }

  stop(): void {
    void this.loop.stop();
    this.watched.clear();
  }
}

/**
 * Keeps long-lived connections honest: every `everyMs` it re-checks the caller of each open
 * connection (expiry, revocation, user deleted or disabled, API key revoked or expired) and closes
 * the ones that are no longer valid, with the reason. One timer for all connections, running only
 * while there are some; checks go through the authenticator's caches, so a pass costs at most one
 * query per user (or key) per cache period. Knows no transport: it is given a close function.
 */
import type { Logger } from "../support/index.js";
import type { Authenticator, Caller } from "./authenticator.js";

/** How often open connections are re-checked. @default 1 s */
export const DEFAULT_RECHECK_MS = 1_000;

interface Watched {
  caller: Caller;
  close: (reason: string) => void;
}

export class SessionWatch {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly deps: { auth: Authenticator; log: Logger; everyMs?: number }) {}

  /** Watches one connection until the returned function is called (connection closed) or it is closed here. */
  watch(caller: Caller, close: (reason: string) => void): () => void {
    const entry: Watched = { caller, close };
    this.watched.add(entry);
    this.timer ??= setInterval(() => void this.check(), this.deps.everyMs ?? DEFAULT_RECHECK_MS).unref();
    return () => this.forget(entry);
  }

  private forget(entry: Watched): void {
    this.watched.delete(entry);
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private async check(): Promise<void> {
    if (this.checking) return; // a slow pass (store down) is not stacked
    this.checking = true;
    try {
      await Promise.all(
        [...this.watched].map(async (entry) => {
          const reason = await this.deps.auth.invalidReason(entry.caller).catch(() => null); // store errors: keep, ask again next pass
          if (reason === null || !this.watched.has(entry)) return;
          this.forget(entry);
          this.deps.log.info({ userId: entry.caller.userId, reason }, "closing a connection whose credentials are no longer valid");
          entry.close(reason);
        }),
      );
    } finally {
      this.checking = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watched.clear();
  }
}

/**
 * One attempt of a run on this node, and the states of its life.
 *
 * Two things move independently during an attempt, so each is a union of its own states rather
 * than a set of flags:
 * - its claim in MongoDB (`claim`). A run claimed in MongoDB before it starts is `confirmed` from
 *   the start. One taken from the ready queue with its payload starts at once and its claim
 *   follows: `queued` → `confirming` → `confirmed` or `refused`; or, when its process ends before
 *   the confirm was sent, `withResult`: the claim goes with the result in one write.
 * - its process (`process`): `running` in a slot, then `ended` (the slot is free; the result may
 *   still be being written).
 * A stop (cancel, lost lease, refused claim, shutdown) can come in any of these states, also after
 * the process ended, and decides how the result counts; the first one stays. The supervisor's own
 * kill is recorded apart, since it can come on top of a stop.
 */
import type { RunDoc, ResourceRequest } from "../domain/index.js";
import { RunAbort } from "./abort.js";
import type { SupervisorKill } from "./sandbox/supervisor.js";

export type StopReason = "CANCEL" | "LEASE_LOST" | "CLAIM_LOST" | "SHUTDOWN";

export type Claim =
  /**
   * Taken with its payload and started; its confirm waits in the confirm queue. `run` is the run
   * as enqueued (QUEUED, the previous token: the attempt's own token is `Attempt.token`).
   */
  | { readonly state: "queued"; readonly run: RunDoc; readonly payload: string; readonly startedAt: number }
  /**
   * Its confirm is being written (`run` is still the run as enqueued). `confirmation` settles true
   * once confirmed, false when the claim was refused or could not be written by the kill deadline.
   */
  | { readonly state: "confirming"; readonly run: RunDoc; readonly confirmation: Promise<boolean> }
  /** In MongoDB (its lease is renewed): `run` is the stored document. */
  | { readonly state: "confirmed"; readonly run: RunDoc }
  /** Refused (the run was cancelled, changed or claimed elsewhere) or not written in time: its result must not count. */
  | { readonly state: "refused" }
  /**
   * Its process ended before its confirm was sent: the claim goes with the result. What it reports
   * is decoded from the payload again then: while held, the result keeps the payload (one string)
   * rather than the decoded run, since a burst holds thousands and every object they keep is copied
   * by each young-generation GC.
   */
  | { readonly state: "withResult"; readonly payload: string; readonly startedAt: number };

/** Its process: running in `slot` (its directories, uid and share of the capacity), or ended (the slot is free again). */
export type ProcessState = { readonly state: "running"; readonly slot: number } | { readonly state: "ended" };

export interface Attempt {
  readonly runId: string;
  /** The attempt's fencing token (a taken run's claim bumps the enqueued one by one). */
  token: number;
  claim: Claim;
  process: ProcessState;
  /** Why it is being stopped, once it is. */
  stop: StopReason | null;
  /** Why the supervisor killed it, if it did. */
  killedBy: SupervisorKill | null;
  readonly abort: RunAbort;
  /** Local kill deadline: lease end minus a safety margin, moved on every successful renewal. */
  killAt: number;
  done: Promise<void>;
  /** What the run reserved of the node's capacity. */
  readonly resources: ResourceRequest;
}

export const ENDED: ProcessState = Object.freeze({ state: "ended" });
export const REFUSED: Claim = Object.freeze({ state: "refused" });

export function newAttempt(runId: string, token: number, claim: Claim, resources: ResourceRequest, slot: number, killAt: number): Attempt {
  return {
    runId,
    token,
    claim,
    process: { state: "running", slot },
    stop: null,
    killedBy: null,
    abort: new RunAbort(),
    killAt,
    done: DONE,
    resources,
  };
}

/** The run as this attempt knows it (see Claim); null when it knows no run (refused, or only the payload is kept). */
export function knownRun(c: Claim): RunDoc | null {
  return c.state === "queued" || c.state === "confirming" || c.state === "confirmed" ? c.run : null;
}

/** Stops the attempt's process for `reason`, unless it is already being stopped. */
export function stopAttempt(a: Attempt, reason: StopReason, why: string): void {
  if (a.stop) return;
  a.stop = reason;
  // The copy the result is reported from says what the stored run says (see the `batched` write in core/runs/transitions.ts).
  if (reason === "CANCEL") a.claim = withCancelRequested(a.claim);
  a.abort.abort(new Error(why));
}

export function withCancelRequested(c: Claim): Claim {
  switch (c.state) {
    case "queued":
    case "confirming":
    case "confirmed":
      return { ...c, run: { ...c.run, cancelRequested: true } };
    default:
      return c;
  }
}

const DONE: Promise<void> = Promise.resolve();

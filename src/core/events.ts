/**
 * Run status events on the event bus. They cross processes as JSON, so instants travel as ISO
 * strings and are revived here; subscribers (GraphQL, tests, metrics) all decode through this file.
 * An event is the run without its `spec` (the job's command and environment, which may hold
 * secrets, never travel on the bus; no subscriber needs them) and without the batch markers:
 * a third less to serialise, send and parse on every status change.
 */
import { Channels, type EventBus, type Unsubscribe } from "../scheduler/ports.js";
import type { RunDoc } from "../store/types.js";

const DATE_FIELDS = ["scheduledFor", "notBefore", "leaseUntil", "queuedAt", "startedAt", "finishedAt", "retryAt", "createdAt", "updatedAt"] as const;

/** What a run event carries. */
export type RunEvent = Omit<RunDoc, "spec" | "batchOp" | "claimId">;

export function encodeRun(run: RunDoc | RunEvent): string {
  const { spec: _spec, batchOp: _op, claimId: _claim, ...event } = run as RunDoc;
  return JSON.stringify(event);
}

export function decodeRun(text: string): RunEvent {
  const raw = JSON.parse(text) as Record<string, unknown>;
  for (const f of DATE_FIELDS) {
    const v = raw[f];
    raw[f] = typeof v === "string" ? new Date(v) : null;
  }
  raw.history = ((raw.history as Array<Record<string, unknown>>) ?? []).map((h) => ({ ...h, at: new Date(h.at as string) }));
  return raw as unknown as RunEvent;
}

/**
 * A run as a ready-queue payload: an executor starts it from this copy and confirms the claim
 * afterwards. Unlike an event it keeps the spec (the program to run); it stays in the shared
 * store and never travels on the bus.
 */
export function encodeRunPayload(run: RunDoc): string {
  const { batchOp: _op, claimId: _claim, ...rest } = run;
  return JSON.stringify(rest);
}

/** Throws when `text` is not a run payload (a run without its spec cannot be started). */
export function decodeRunPayload(text: string): RunDoc {
  const run = decodeRun(text) as RunDoc;
  if (!run || typeof run._id !== "string" || !run.spec || typeof run.fencingToken !== "number") throw new Error("not a run payload");
  return run;
}

export class RunEvents {
  constructor(private readonly bus: EventBus) {}

  publish(run: RunDoc): Promise<void> {
    return this.bus.publish(Channels.runEvents, encodeRun(run));
  }

  subscribe(handler: (run: RunEvent) => void): Promise<Unsubscribe> {
    return this.bus.subscribe(Channels.runEvents, (msg) => handler(decodeRun(msg)));
  }
}

/** Cancel requests for running runs travel to whichever executor holds them. */
export const CANCEL_CHANNEL = "kairos:cancel";

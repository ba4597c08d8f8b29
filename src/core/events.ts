/**
 * Run status events on the event bus. They cross processes as JSON, so instants travel as ISO
 * strings and are revived here; subscribers (GraphQL, tests, metrics) all decode through this file.
 */
import { Channels, type EventBus, type Unsubscribe } from "../scheduler/ports.js";
import type { RunDoc } from "../store/types.js";

const DATE_FIELDS = ["scheduledFor", "leaseUntil", "queuedAt", "startedAt", "finishedAt", "retryAt", "createdAt", "updatedAt"] as const;

export function encodeRun(run: RunDoc): string {
  return JSON.stringify(run);
}

export function decodeRun(text: string): RunDoc {
  const raw = JSON.parse(text) as Record<string, unknown>;
  for (const f of DATE_FIELDS) {
    const v = raw[f];
    raw[f] = typeof v === "string" ? new Date(v) : null;
  }
  raw.history = ((raw.history as Array<Record<string, unknown>>) ?? []).map((h) => ({ ...h, at: new Date(h.at as string) }));
  return raw as unknown as RunDoc;
}

export class RunEvents {
  constructor(private readonly bus: EventBus) {}

  publish(run: RunDoc): Promise<void> {
    return this.bus.publish(Channels.runEvents, encodeRun(run));
  }

  subscribe(handler: (run: RunDoc) => void): Promise<Unsubscribe> {
    return this.bus.subscribe(Channels.runEvents, (msg) => handler(decodeRun(msg)));
  }
}

/** Cancel requests for running runs travel to whichever executor holds them. */
export const CANCEL_CHANNEL = "kairos:cancel";

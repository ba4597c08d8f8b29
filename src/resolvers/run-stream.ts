/** Run events from the bus as a subscription's iterator (see event-stream.ts), those `accept` lets through. */
import type { RunEvent, RunEvents } from "../core/index.js";
import { eventStream } from "./event-stream.js";

export function runStream(events: RunEvents, accept: (run: RunEvent) => boolean, maxBuffered = 1_000): AsyncIterableIterator<RunEvent> {
  return eventStream<RunEvent>(
    (push) =>
      events.subscribe((run) => {
        if (accept(run)) push(run);
      }),
    maxBuffered,
  );
}

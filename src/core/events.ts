/**
 * Run status events on the event bus, and runs as ready-queue payloads. They cross processes as
 * JSON, so instants travel as epoch milliseconds (payloads written before this encoding carry ISO
 * strings; both are read) and are revived here; subscribers (GraphQL, tests, metrics) and
 * executors all decode through this file.
 * An event is the run without its `spec` (the job's command and environment, which may hold
 * secrets, never travel on the bus; no subscriber needs them) and without the batch markers:
 * a third less to serialise, send and parse on every status change.
 */
import { Channels, type EventBus, type Unsubscribe } from "../shared-state/index.js";
import type { RunDoc } from "../domain/index.js";

const DATE_FIELDS = ["scheduledFor", "notBefore", "leaseUntil", "queuedAt", "startedAt", "finishedAt", "retryAt", "createdAt", "updatedAt"] as const;

/** What a run event carries. */
export type RunEvent = Omit<RunDoc, "spec" | "batchOp" | "claimId" | "resultJson">;

/**
 * The event of a run: every field but the spec and the batch markers, named one by one (one
 * object shape for every event; copying with a rest pattern was a sixth of an executor's time).
 */
export function encodeRun(run: RunDoc | RunEvent): string {
  return JSON.stringify(wireRun(run as RunDoc, undefined));
}

/**
 * The run as it crosses processes, `spec` included only when given. Instants as epoch
 * milliseconds: Date#toJSON (an ISO string each) was most of the cost of encoding. Fields that
 * are null are left out (undefined is not encoded), a fifth of a queued run's payload; decoding
 * puts the nulls back.
 */
function wireRun(r: RunDoc, spec: RunDoc["spec"] | undefined) {
  return {
    _id: r._id,
    ownerId: r.ownerId,
    jobId: r.jobId,
    jobName: r.jobName,
    fireKey: r.fireKey,
    trigger: r.trigger,
    scheduledFor: ms(r.scheduledFor),
    status: r.status,
    attempt: r.attempt,
    retry: r.retry,
    overlap: r.overlap,
    fencingToken: r.fencingToken,
    priority: r.priority,
    pool: r.pool,
    nodeId: r.nodeId ?? undefined,
    nodeEpoch: r.nodeEpoch ?? undefined,
    leaseUntil: ms(r.leaseUntil),
    userSlot: r.userSlot,
    heldByLimit: r.heldByLimit,
    heldAt: r.heldAt == null ? undefined : ms(r.heldAt), // optional: absent on runs never parked
    cancelRequested: r.cancelRequested,
    withdrawn: r.withdrawn || undefined,
    notBefore: ms(r.notBefore),
    queuedAt: ms(r.queuedAt),
    startedAt: ms(r.startedAt),
    finishedAt: ms(r.finishedAt),
    retryAt: ms(r.retryAt),
    exitCode: r.exitCode ?? undefined,
    signal: r.signal ?? undefined,
    error: r.error ?? undefined,
    outputTail: r.outputTail ?? undefined,
    outputTruncated: r.outputTruncated,
    usage: r.usage ?? undefined,
    dagRunId: r.dagRunId ?? undefined,
    taskKey: r.taskKey ?? undefined,
    mapIndex: r.mapIndex ?? undefined,
    httpResponse: r.httpResponse ?? undefined,
    traceparent: r.traceparent ?? undefined, // only when tracing made one (src/support/tracing.ts)
    history: r.history.map((h) => ({ status: h.status, at: ms(h.at), reason: h.reason ?? undefined, nodeId: h.nodeId ?? undefined, attempt: h.attempt ?? undefined })),
    createdAt: ms(r.createdAt),
    updatedAt: ms(r.updatedAt),
    spec,
  };
}

const ms = (d: Date | null | undefined): number | undefined => (d ? d.getTime() : undefined);
/** Fields a run always has, null when unset, that travel only when set. */
const NULLABLE_FIELDS = ["nodeId", "exitCode", "signal", "error", "outputTail"] as const;
const revive = (v: unknown): Date | null => (typeof v === "number" || typeof v === "string" ? new Date(v) : null);

/** The events of one bus message (a JSON array of events; see RunEvents.publish). */
export function decodeRunEvents(text: string): RunEvent[] {
  const raw = JSON.parse(text) as unknown;
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((e) => reviveRun(e as Record<string, unknown>));
}

export function decodeRun(text: string): RunEvent {
  return reviveRun(JSON.parse(text) as Record<string, unknown>);
}

function reviveRun(raw: Record<string, unknown>): RunEvent {
  for (const f of DATE_FIELDS) raw[f] = revive(raw[f]);
  if (raw.heldAt !== undefined) raw.heldAt = revive(raw.heldAt);
  for (const f of NULLABLE_FIELDS) raw[f] ??= null;
  const history = (raw.history as Array<Record<string, unknown>> | undefined) ?? [];
  for (const h of history) {
    h.at = revive(h.at);
    h.reason ??= null;
    h.nodeId ??= null;
    h.attempt ??= null;
  }
  raw.history = history;
  return raw as unknown as RunEvent;
}

/**
 * A run as a ready-queue payload: an executor starts it from this copy and confirms the claim
 * afterwards. Unlike an event it keeps the spec (the program to run); it stays in the shared
 * store and never travels on the bus.
 */
export function encodeRunPayload(run: RunDoc): string {
  return JSON.stringify(wireRun(run, run.spec));
}

/** Throws when `text` is not a run payload (a run without its spec cannot be started). */
export function decodeRunPayload(text: string): RunDoc {
  const run = decodeRun(text) as RunDoc;
  if (!run || typeof run._id !== "string" || !run.spec || typeof run.fencingToken !== "number") throw new Error("not a run payload");
  return run;
}

/** Most events in one bus message. */
const EVENTS_PER_MESSAGE = 256;

/**
 * Run events on the bus. The events of one event-loop turn travel in one message (a JSON array,
 * in the order they were published), so a burst of status changes costs a few publishes, not one
 * per change.
 */
export class RunEvents {
  private pending: { parts: string[]; sent: Promise<void> } | null = null;

  constructor(private readonly bus: EventBus) {}

  /** Encodes the run now (later changes to the object do not leak in); resolves once sent. */
  publish(run: RunDoc): Promise<void> {
    const part = encodeRun(run);
    if (this.pending && this.pending.parts.length < EVENTS_PER_MESSAGE) {
      this.pending.parts.push(part);
      return this.pending.sent;
    }
    const parts = [part];
    const sent = new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        if (this.pending?.parts === parts) this.pending = null;
        this.bus.publish(Channels.runEvents, `[${parts.join(",")}]`).then(resolve, reject);
      }),
    );
    this.pending = { parts, sent };
    return sent;
  }

  subscribe(handler: (run: RunEvent) => void): Promise<Unsubscribe> {
    return this.bus.subscribe(Channels.runEvents, (msg) => {
      for (const run of decodeRunEvents(msg)) handler(run);
    });
  }
}


// Every stored field of a run travels (a field added to RunDoc and forgotten in wireRun fails to compile).
// A DAG task's result (up to 64 KiB) does not travel: readers take it from the run document.
type UnsentField = Exclude<Exclude<keyof RunDoc, "batchOp" | "claimId" | "resultJson">, keyof ReturnType<typeof wireRun>>;
const everyFieldSent: [UnsentField] extends [never] ? true : UnsentField = true;
void everyFieldSent;

/**
 * Tracing of a run's path (API → fire → claim → start → end) with OpenTelemetry's API. A run is a
 * trace across processes: the context of the span that created it travels on the run document as
 * a W3C `traceparent` (RunDoc.traceparent), and every process that handles the run later (the
 * executor that claims, starts and reports it) opens its spans as children of that context.
 *
 * Off unless an exporter is configured (./tracing-export.ts, KAIROS_OTLP_ENDPOINT): every helper
 * here then returns at its first line (one boolean read), no span object is made, no traceparent
 * is written, and log lines carry no trace ids.
 */
import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

export { SpanKind, type Attributes, type Span } from "@opentelemetry/api";

/** The tracer once tracing is on (set by startTracing); null: every helper is a no-op. */
let tracer: Tracer | null = null;
const propagator = new W3CTraceContextPropagator();
const NONE = Object.freeze({});

/** Attribute names of the run path (one place, so dashboards and tests read the same names). */
export const TraceAttr = {
  runId: "kairos.run.id",
  jobId: "kairos.job.id",
  attempt: "kairos.run.attempt",
  token: "kairos.run.fencing_token",
  trigger: "kairos.run.trigger",
  status: "kairos.run.status",
  slotAt: "kairos.fire.slot_at",
  latenessMs: "kairos.fire.lateness_ms",
  exitCode: "kairos.run.exit_code",
  durationMs: "kairos.run.duration_ms",
  waitMs: "kairos.claim.wait_ms",
  pool: "kairos.run.pool",
  operation: "graphql.operation.name",
  operationType: "graphql.operation.type",
} as const;

/** Turns tracing on with the tracer of a registered provider (./tracing-export.ts); null turns it off. */
export function setTracer(t: Tracer | null): void {
  tracer = t;
}

export function tracingOn(): boolean {
  return tracer !== null;
}

/** The W3C traceparent of `ctx`'s span, or null when it has none (or tracing is off). */
export function traceparentOf(ctx: Context): string | null {
  if (!tracer) return null;
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/**
 * `{ traceparent }` of the active span, to spread into a document being created (a run, a job);
 * an empty object when tracing is off or no span is active, so nothing is stored then.
 */
export function activeTraceparent(): { traceparent?: string } {
  if (!tracer) return NONE;
  const tp = traceparentOf(context.active());
  return tp ? { traceparent: tp } : NONE;
}

/** The context a stored traceparent names (a root context when it is absent or malformed). */
export function contextOf(traceparent: string | null | undefined, headers?: Record<string, unknown>): Context {
  if (!traceparent && !headers) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers ?? { traceparent }, defaultTextMapGetter);
}

export interface SpanOptions {
  /** The parent: a stored traceparent (null/undefined: the active context). */
  parent?: string | null;
  /** No parent: the span starts a trace of its own (whatever context is active). */
  root?: boolean;
  /** Traceparents of related traces (a scheduled fire links to the request that created its job). */
  links?: ReadonlyArray<string | null | undefined>;
  kind?: SpanKind;
  /** Epoch ms the span began, when before now (a claim span starts when its run was queued). */
  startTime?: number;
}

/** Starts a span (not active); null when tracing is off. End it with {@link endSpan}. */
export function startSpan(name: string, attributes: Attributes, opts: SpanOptions = {}): Span | null {
  if (!tracer) return null;
  const parent = opts.root ? ROOT_CONTEXT : opts.parent !== undefined && opts.parent !== null ? contextOf(opts.parent) : context.active();
  const links: Link[] = [];
  for (const tp of opts.links ?? []) {
    if (!tp) continue;
    const sc = trace.getSpanContext(contextOf(tp));
    if (sc) links.push({ context: sc });
  }
  return tracer.startSpan(name, { attributes, kind: opts.kind ?? SpanKind.INTERNAL, links, startTime: opts.startTime }, parent);
}

/** Ends the span (null: nothing), with attributes added and an error status when `error` is given. */
export function endSpan(span: Span | null | undefined, attributes?: Attributes, error?: unknown): void {
  if (!span || !span.isRecording()) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) failSpan(span, error);
  span.end();
}

function failSpan(span: Span, error: unknown): void {
  const e = error instanceof Error ? error : new Error(String(error));
  span.recordException(e);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
}

/** Runs `fn` with a new span active (children and log lines inside see it); ends it when `fn` settles. */
export async function withSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>, opts: SpanOptions = {}): Promise<T> {
  if (!tracer) return fn();
  const span = startSpan(name, attributes, opts)!;
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (e) {
    failSpan(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** Runs `fn` (synchronous, e.g. an Express `next`) with `span` active; `fn` alone when there is none. */
export function runWithin<T>(span: Span | null, fn: () => T): T {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Adds attributes to the active span (none, or tracing off: nothing). */
export function annotateActiveSpan(attributes: Attributes): void {
  if (!tracer) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Renames the active span (a request's span once its GraphQL operation is known). */
export function renameActiveSpan(name: string): void {
  if (!tracer) return;
  trace.getActiveSpan()?.updateName(name);
}

/** What a span of a run's path needs of the run (RunDoc has all of it). */
export interface TracedRun {
  _id: string;
  jobId: string;
  attempt: number;
  traceparent?: string | null;
}

/**
 * Starts a span of `run`'s path as a child of the context stored on the run; null when tracing is
 * off or the run carries none (made while tracing was off, or by a process that does not trace).
 */
export function runSpan(name: string, run: TracedRun, attributes: Attributes = {}, startTime?: number): Span | null {
  if (!tracer || !run.traceparent) return null;
  return startSpan(name, { [TraceAttr.runId]: run._id, [TraceAttr.jobId]: run.jobId, [TraceAttr.attempt]: run.attempt, ...attributes }, { parent: run.traceparent, startTime });
}

/**
 * The claim of `run` by an executor, as a span from the moment the run could be taken (queued, or
 * its staged time) to `now`, when this node took it: the wait in the ready queue.
 */
export function traceClaim(run: TracedRun & { queuedAt?: Date | null; notBefore?: Date | null; createdAt?: Date }, token: number, now: number): void {
  if (!tracer || !run.traceparent) return;
  const queued = Math.max(run.queuedAt?.getTime() ?? 0, run.notBefore?.getTime() ?? 0) || (run.createdAt?.getTime() ?? now);
  const from = Math.min(queued, now);
  endSpan(runSpan("kairos.claim", run, { [TraceAttr.token]: token, [TraceAttr.waitMs]: now - from }, from));
}

/** Runs `fn` inside a span of `run`'s path (see {@link runSpan}); `fn` alone when there is none. */
export async function withRunSpan<T>(name: string, run: TracedRun, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  const span = runSpan(name, run, attributes);
  if (!span) return fn();
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (e) {
    failSpan(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/**
 * The span of one fire of a job's schedule (or a manual trigger, a backfill): the runs it creates
 * carry its context. A job's first fire continues the trace of the request that created the job
 * (so one trace shows createJob through to that run's end; "first" is the scheduler's first pass
 * over the job, firedCount 0, so the runs that pass stages ahead join it too); later fires of a
 * recurring job each start a trace of their own, linked to that request (one trace per run, not
 * one trace a year long).
 */
export function withFireSpan<T>(
  job: { _id: string; traceparent?: string | null; firedCount: number },
  fire: { slotAt: number; trigger: string; now: number },
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const first = job.firedCount === 0 && !!job.traceparent;
  const attributes = {
    [TraceAttr.jobId]: job._id,
    [TraceAttr.trigger]: fire.trigger,
    [TraceAttr.slotAt]: new Date(fire.slotAt).toISOString(),
    [TraceAttr.latenessMs]: Math.max(0, fire.now - fire.slotAt),
  };
  // A manual trigger happens inside its API request's span: that is its parent.
  if (fire.trigger !== "SCHEDULE") return withSpan("kairos.fire", attributes, fn);
  return withSpan("kairos.fire", attributes, fn, first ? { parent: job.traceparent } : { root: true, links: [job.traceparent] });
}

/** pino's mixin: the active span's ids on every log line written inside it (nothing when tracing is off). */
export function traceLogFields(): Record<string, string> {
  if (!tracer) return NONE;
  const sc = trace.getActiveSpan()?.spanContext();
  return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : NONE;
}

/**
 * pino's mixinMergeStrategy for {@link traceLogFields}: the line's own fields over the ids, and
 * the line's fields untouched (no copy, no allocation) when there are none (pino's default
 * strategy assigns into the mixin's object, which is shared and frozen here).
 */
export function mergeTraceLogFields(mergeObject: object, mixinObject: object): object {
  return mixinObject === NONE ? mergeObject : Object.assign(mixinObject, mergeObject);
}

/** Document → GraphQL object mapping, in one place. */
import { formatStatusRange, resourcesOf } from "../core/index.js";
import { poolOfQueue, reportedStatus, ReportedRunStatus, RunStatus } from "../domain/index.js";
import type { RunEvent } from "../core/index.js";
import { describeSchedule, formatDuration } from "../timing/index.js";
import type { ApiKeyDoc, FireDoc, JobDoc, NodeDoc, RunDoc, UserDoc } from "../domain/index.js";
import type { Fire, Job } from "../schema/index.js";
import type { Run } from "../schema/index.js";
import type { ApiKey, User } from "../schema/index.js";
import type { ExecutorNode } from "../schema/index.js";
import type { ResourceAllocation } from "../schema/index.js";
import type { Allocation } from "../core/index.js";

const date = (ms: number | null | undefined): Date | null => (ms == null ? null : new Date(ms));
const dur = (ms: number | null | undefined): string | null => (ms ? formatDuration(ms) : null);

function artifactOf(spec: JobDoc["spec"]): { id: string; size: number; sha256: string } | null {
  const a = spec.script?.artifact ?? spec.binary?.artifact ?? null;
  return a ? { id: a.id, size: a.size, sha256: a.sha256 } : null;
}

export function toUser(u: UserDoc): User {
  return {
    id: u._id,
    username: u.username,
    role: u.role,
    maxConcurrentRuns: u.maxConcurrentRuns ?? null,
    disabled: u.disabled === true,
    createdAt: u.createdAt,
  };
}

export function toApiKey(k: ApiKeyDoc): ApiKey {
  return {
    id: k._id,
    ownerId: k.ownerId,
    name: k.name,
    prefix: k.prefix,
    scope: k.scope,
    expiresAt: k.expiresAt,
    lastUsedAt: k.lastUsedAt,
    revokedAt: k.revokedAt,
    createdAt: k.createdAt,
  };
}


export function toJob(j: JobDoc): Job {
  return {
    id: j._id,
    ownerId: j.ownerId,
    name: j.name,
    description: j.description,
    tags: j.tags,
    schedule: toSchedule(j.schedule, j.rescheduledTo),
    spec: j.specTextOmitted ? toSpecWithoutText(j._id, j.spec) : toSpec(j.spec),
    priority: j.priority,
    retry: toRetry(j.retry),
    overlap: j.overlap,
    misfire: j.misfire,
    catchupWindow: formatDuration(j.catchupWindowMs),
    paused: j.paused,
    status: j.status,
    lastRun: j.lastRun ? { id: j.lastRun.runId, status: j.lastRun.status, trigger: j.lastRun.trigger, scheduledFor: j.lastRun.scheduledFor, finishedAt: j.lastRun.finishedAt } : null,
    nextFireAt: j.nextFireAt,
    lastSlotAt: j.lastSlotAt,
    firedCount: j.firedCount,
    ownerDeleted: j.ownerDeleted === true,
    version: j.version,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
}

/** A schedule as the API shows it (a job's, a DAG's). */
export function toSchedule(s: JobDoc["schedule"], rescheduledTo: Date | null = null): Job["schedule"] {
  return {
    kind: s.kind,
    at: date(s.atMs),
    every: s.every ?? null,
    cron: s.cron ?? null,
    timezone: s.timezone,
    startAt: date(s.startAt),
    endAt: date(s.endAt),
    maxFires: s.maxFires ?? null,
    dstGap: s.dstGap,
    dstRepeat: s.dstRepeat,
    jitter: dur(s.jitterMs),
    spread: dur(s.spreadMs),
    description: describeSchedule(s, rescheduledTo?.getTime() ?? null),
  };
}

/**
 * The spec of a job read without its text (JobDoc.specTextOmitted): the text's fields are read for
 * the request when asked for (job-spec.resolver.ts).
 */
export function toSpecWithoutText(jobId: string, spec: JobDoc["spec"]): Job["spec"] {
  return { ...toSpec({ ...spec, command: null, argv: null, env: {} }), textOf: { jobId, spec } };
}

/** A spec as the API shows it (a job's, a DAG task's). */
export function toSpec(spec: JobDoc["spec"]): Job["spec"] {
  return {
    kind: spec.kind,
    command: spec.command,
    argv: spec.argv,
    interpreter: spec.script?.interpreter ?? null,
    source: spec.script?.source ?? null,
    artifact: artifactOf(spec),
    args: spec.script?.args ?? spec.binary?.args ?? null,
    http: spec.http ? { ...spec.http, successStatuses: spec.http.successStatuses.map(formatStatusRange) } : null,
    env: spec.env,
    timeout: formatDuration(spec.timeoutMs),
    pool: spec.pool,
    resources: resourcesOf(spec),
    network: (spec.network ?? "NONE"),
  };
}

/** A retry policy as the API shows it (a job's, a DAG task's). */
export function toRetry(r: JobDoc["retry"]): Job["retry"] {
  return {
    maxAttempts: r.maxAttempts,
    backoff: r.backoff,
    initial: formatDuration(r.initialMs),
    factor: r.factor,
    max: formatDuration(r.maxMs),
    jitter: r.jitter,
    nonRetryableExitCodes: r.nonRetryableExitCodes,
    retryOnOomKill: r.retryOnOomKill ?? true,
  };
}

/** A run as the API shows it at `now` (epoch ms: a run staged ahead reads SCHEDULED until its time). */
export function toRun(r: RunDoc | RunEvent, now: number): Run {
  return {
    id: r._id,
    jobId: r.jobId,
    jobName: r.jobName,
    status: reportedStatus(r, now),
    trigger: r.trigger,
    fireKey: r.fireKey,
    attempt: r.attempt,
    maxAttempts: r.retry.maxAttempts,
    fencingToken: r.fencingToken,
    priority: r.priority,
    pool: poolOfQueue(r.pool),
    scheduledFor: r.scheduledFor,
    notBefore: r.notBefore ?? null,
    queuedAt: r.queuedAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    retryAt: r.retryAt,
    durationMs: r.startedAt && r.finishedAt ? r.finishedAt.getTime() - r.startedAt.getTime() : null,
    exitCode: r.exitCode,
    signal: r.signal,
    error: r.error,
    nodeId: r.nodeId,
    dagRunId: r.dagRunId ?? null,
    taskKey: r.taskKey ?? null,
    outputTail: r.outputTail,
    outputTruncated: r.outputTruncated,
    usage: r.usage ?? null,
    httpResponse: r.httpResponse ?? null,
    cancelRequested: r.cancelRequested,
    // A withdrawn run's last entry says so, as its status does (stored CANCELLED).
    history: r.history.map((h, i) => ({ ...h, status: r.withdrawn && i === r.history.length - 1 && h.status === RunStatus.CANCELLED ? ReportedRunStatus.WITHDRAWN : h.status, attempt: h.attempt ?? null })),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    source: r,
  };
}

export function toFire(f: FireDoc): Fire {
  return {
    id: f._id,
    slotAt: f.slotAt,
    outcome: f.outcome,
    runId: f.runId,
    latenessMs: f.latenessMs,
    reason: f.reason,
    recordedAt: f.recordedAt,
  };
}

export function toAllocation(a: Allocation): ResourceAllocation {
  return { runId: a.runId, nodeId: a.nodeId, cpu: a.cpu, memoryMb: a.memoryMb, pids: a.pids, diskMb: a.diskMb, since: a.since };
}

export function toNode(n: NodeDoc): ExecutorNode {
  const isolation = n.isolation
    ? { ...n.isolation, mode: n.isolation.mode, network: n.isolation.network }
    : null;
  return { ...n, id: n._id, status: n.status, maxRun: n.maxRun ?? null, defaultRun: n.defaultRun ?? null, isolation, interpreters: n.interpreters ?? [] };
}

/** GraphQL job inputs → the job service's inputs (durations and instants as the domain keeps them). */
import type { JobInput, JobPatch, JobSpecInput as DomainSpecInput } from "../core/index.js";
import type { ScheduleInput as DomainScheduleInput } from "../timing/index.js";
import type { CreateJobInput, JobSpecInput, RetryInput, ScheduleInput, UpdateJobInput } from "../schema/index.js";

const ms = (d: Date | null | undefined) => (d == null ? undefined : d.getTime());

export function scheduleIn(s: ScheduleInput): DomainScheduleInput {
  return {
    kind: s.kind,
    at: ms(s.at),
    delay: s.delay ?? undefined,
    every: s.every ?? undefined,
    cron: s.cron ?? undefined,
    timezone: s.timezone ?? undefined,
    startAt: ms(s.startAt),
    endAt: ms(s.endAt),
    maxFires: s.maxFires ?? undefined,
    dstGap: s.dstGap ?? undefined,
    dstRepeat: s.dstRepeat ?? undefined,
    jitter: s.jitter ?? undefined,
    spread: s.spread ?? undefined,
  };
}

export function specIn(s: JobSpecInput): DomainSpecInput {
  return {
    kind: s.kind,
    command: s.command,
    argv: s.argv,
    interpreter: s.interpreter,
    source: s.source,
    artifactId: s.artifactId,
    args: s.args,
    http: s.http ? { method: s.http.method, url: s.http.url, headers: s.http.headers, body: s.http.body, successStatuses: s.http.successStatuses } : null,
    env: s.env,
    timeout: s.timeout,
    pool: s.pool,
    resources: s.resources,
    network: s.network,
  };
}

export function retryIn(r: RetryInput | null | undefined) {
  if (!r) return null;
  return {
    maxAttempts: r.maxAttempts ?? undefined,
    backoff: r.backoff ?? undefined,
    initial: r.initial ?? undefined,
    factor: r.factor ?? undefined,
    max: r.max ?? undefined,
    jitter: r.jitter ?? undefined,
    nonRetryableExitCodes: r.nonRetryableExitCodes ?? undefined,
    retryOnOomKill: r.retryOnOomKill ?? undefined,
  };
}

export function jobInput(i: CreateJobInput): JobInput {
  return {
    name: i.name,
    description: i.description,
    tags: i.tags,
    schedule: scheduleIn(i.schedule),
    spec: specIn(i.spec),
    priority: i.priority,
    retry: retryIn(i.retry),
    overlap: i.overlap,
    misfire: i.misfire,
    catchupWindow: i.catchupWindow,
    paused: i.paused,
  };
}

export function jobPatch(i: UpdateJobInput): JobPatch {
  const p: JobPatch = {};
  if (i.name != null) p.name = i.name;
  if (i.description !== undefined) p.description = i.description;
  if (i.tags != null) p.tags = i.tags;
  if (i.schedule != null) p.schedule = scheduleIn(i.schedule);
  if (i.spec != null) p.spec = specIn(i.spec);
  if (i.priority != null) p.priority = i.priority;
  if (i.retry != null) p.retry = retryIn(i.retry);
  if (i.overlap != null) p.overlap = i.overlap;
  if (i.misfire != null) p.misfire = i.misfire;
  if (i.catchupWindow != null) p.catchupWindow = i.catchupWindow;
  return p;
}

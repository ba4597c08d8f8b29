/**
 * The reads by id of one request (or one subscription event). DataLoader batches the ids asked
 * within one tick into one query and keeps what it read for the request only: batching without
 * caching across users. Whether the caller may see a document is decided in auth/access.ts.
 */
import DataLoader from "dataloader";
import { canSee, visible, visibleJob } from "../auth/index.js";
import type { Principal } from "../auth/index.js";
import type { JobDoc, JobSpec, NodeDoc, RunDoc, UserDoc } from "../domain/index.js";
import { NotFoundError, ValidationError } from "../domain/index.js";
import type { Clock } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import { findJobsWithoutSpecText, findNodesByIds, findRunsByIds, findSpecTexts, findStagedRunsOfJobs, type StagedRun } from "../store/index.js";
import { allocatedOn } from "./allocations.js";

export interface LookupDeps {
  mongo: Mongo;
  clock: Clock;
  users: { byIds(ids: readonly string[]): Promise<UserDoc[]> };
}

/** Makes each request's {@link Lookups}. */
export class LookupService {
  constructor(private readonly deps: LookupDeps) {}

  forRequest(): Lookups {
    return new Lookups(this.deps);
  }
}

/**
 * Most bytes of spec text (SPEC_TEXT_PATHS: commands, argv, env, scripts, HTTP bodies) one request
 * reads, and answers (aliases answer the same job's text again): a page of 100 jobs with 64 KiB
 * commands and argv fits (12.5 MiB), 20 aliases of a page of jobs with 1 MiB scripts do not (2 GB,
 * which ran the API out of memory).
 */
export const MAX_SPEC_TEXT_BYTES_PER_REQUEST = 32 * 1024 * 1024;
/** Jobs whose spec text is read at once (at most ~20 MiB), so a request stops reading soon after its budget. */
const SPEC_TEXT_READ_CHUNK = 16;

function byId<T extends { _id: string }>(load: (ids: string[]) => Promise<T[]>): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const docs = await load([...ids]);
    const map = new Map(docs.map((d) => [d._id, d]));
    return ids.map((id) => map.get(id) ?? null);
  });
}

export class Lookups {
  private readonly users: DataLoader<string, UserDoc | null>;
  private readonly jobs: DataLoader<string, JobDoc | null>;
  private readonly runs: DataLoader<string, RunDoc | null>;
  private readonly nodes: DataLoader<string, NodeDoc | null>;
  private readonly staged: DataLoader<string, StagedRun[]>;
  private readonly allocations: DataLoader<string, { cpu: number; memoryMb: number } | null>;
  private readonly specTexts: DataLoader<string, Partial<JobSpec> | null>;
  /** Spec text bytes this request has read, and answered (each within MAX_SPEC_TEXT_BYTES_PER_REQUEST). */
  private specTextRead = 0;
  private specTextAnswered = 0;

  private readonly clock: Clock;

  constructor(deps: LookupDeps) {
    const { mongo } = deps;
    this.clock = deps.clock;
    this.users = byId((ids) => deps.users.byIds(ids));
    // Without their spec's text, which a request reads only where it asks for it (specText).
    this.jobs = byId((ids) => findJobsWithoutSpecText(mongo, ids));
    this.specTexts = new DataLoader(async (ids) => {
      const map = new Map<string, Partial<JobSpec>>();
      for (let i = 0; i < ids.length; i += SPEC_TEXT_READ_CHUNK) {
        if (this.specTextRead > MAX_SPEC_TEXT_BYTES_PER_REQUEST) throw tooMuchSpecText();
        for (const d of await findSpecTexts(mongo, ids.slice(i, i + SPEC_TEXT_READ_CHUNK))) {
          const text = d.spec ?? {};
          this.specTextRead += specTextBytes(text);
          map.set(d._id, text);
        }
      }
      if (this.specTextRead > MAX_SPEC_TEXT_BYTES_PER_REQUEST) throw tooMuchSpecText();
      return ids.map((id) => map.get(id) ?? null);
    });
    this.runs = byId((ids) => findRunsByIds(mongo, ids));
    this.nodes = byId((ids) => findNodesByIds(mongo, ids));
    this.staged = new DataLoader(async (jobIds) => {
      const staged = await findStagedRunsOfJobs(mongo, jobIds, deps.clock());
      return jobIds.map((id) => staged.filter((r) => r.jobId === id));
    });
    this.allocations = new DataLoader(async (nodeIds) => {
      const totals = await allocatedOn(mongo, nodeIds);
      return nodeIds.map((id) => totals.get(id) ?? null);
    });
  }

  /** A job the caller may see; NOT_FOUND when it is missing or someone else's. */
  async job(p: Principal, id: string): Promise<JobDoc> {
    return visibleJob(p, id, await this.jobs.load(id));
  }

  /** The job if it exists and the caller may see it, else null. */
  async jobIfVisible(p: Principal, id: string): Promise<JobDoc | null> {
    const doc = await this.jobs.load(id);
    return doc && !doc.dagId && canSee(p, doc.ownerId) ? doc : null;
  }

  /** The job if it exists (null when not); NOT_FOUND when it is someone else's. */
  async jobIfExists(p: Principal, id: string): Promise<JobDoc | null> {
    const doc = await this.jobs.load(id);
    return doc ? visibleJob(p, id, doc) : null;
  }

  /**
   * The text of a job's spec (SPEC_TEXT_PATHS) for a job this request read without it (the caller
   * sees the job already), within MAX_SPEC_TEXT_BYTES_PER_REQUEST a request (BAD_USER_INPUT past
   * it); null once the job is gone.
   */
  async specText(jobId: string): Promise<Partial<JobSpec> | null> {
    const text = await this.specTexts.load(jobId);
    // Counted per answer: aliases of one listing answer the same text again.
    this.specTextAnswered += text ? specTextBytes(text) : 0;
    if (this.specTextAnswered > MAX_SPEC_TEXT_BYTES_PER_REQUEST) throw tooMuchSpecText();
    return text;
  }

  /** A run the caller may see; NOT_FOUND when it is missing or someone else's. */
  async run(p: Principal, id: string): Promise<RunDoc> {
    return visible(p, "run", id, await this.runs.load(id));
  }

  /**
   * An executor node by id, as a run names it (the caller sees the run already; nodes are shared:
   * any signed-in user sees them); null once its document is gone.
   */
  node(id: string): Promise<NodeDoc | null> {
    return this.nodes.load(id);
  }

  /** The caller's own account; NOT_FOUND once it is gone. */
  async me(p: Principal): Promise<UserDoc> {
    const u = await this.users.load(p.userId);
    if (!u) throw new NotFoundError("user", p.userId);
    return u;
  }

  /** A job's owner as shown with the job (the caller sees the job already); null once deleted. */
  owner(job: Pick<JobDoc, "ownerId">): Promise<UserDoc | null> {
    return this.users.load(job.ownerId);
  }

  /**
   * A job's runs staged ahead of their time (QUEUED, `notBefore` still to come), earliest first:
   * fires that have their run already but have not happened (see KAIROS_STAGE_AHEAD).
   */
  stagedFires(jobId: string): Promise<StagedRun[]> {
    return this.staged.load(jobId);
  }

  /** The clock's time (epoch ms): what a run's reported status is judged at (a staged run reads SCHEDULED until its time). */
  now(): number {
    return this.clock();
  }

  /** CPU and memory reserved on a node by its running attempts (core/allocations.ts). */
  allocated(nodeId: string): Promise<{ cpu: number; memoryMb: number } | null> {
    return this.allocations.load(nodeId);
  }
}

/** About the bytes a spec's text takes in an answer. */
function specTextBytes(text: Partial<JobSpec>): number {
  return (
    (text.command?.length ?? 0) +
    (text.argv ?? []).reduce((n, a) => n + a.length, 0) +
    Object.entries(text.env ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0) +
    (text.script?.source?.length ?? 0) +
    (text.script?.args ?? text.binary?.args ?? []).reduce((n, a) => n + a.length, 0) +
    (text.http?.body?.length ?? 0) +
    Object.entries(text.http?.headers ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0)
  );
}

function tooMuchSpecText(): ValidationError {
  return new ValidationError(
    "spec",
    `the jobs in this request carry more than ${MAX_SPEC_TEXT_BYTES_PER_REQUEST} bytes (32 MiB) of commands, argv, env, scripts and HTTP bodies; ask for fewer jobs in one request, or list jobs without those fields and read them job by job`,
  );
}

/**
 * The reads by id of one request (or one subscription event). DataLoader batches the ids asked
 * within one tick into one query and keeps what it read for the request only: batching without
 * caching across users. Whether the caller may see a document is decided in auth/access.ts.
 */
import DataLoader from "dataloader";
import { canSee, visible, visibleJob } from "../auth/index.js";
import type { Principal } from "../auth/index.js";
import type { JobDoc, RunDoc, UserDoc } from "../domain/index.js";
import { NotFoundError } from "../domain/index.js";
import type { Clock } from "../shared-state/index.js";
import { findJobsByIds } from "../store/index.js";
import type { Mongo } from "../store/index.js";
import { findRunsByIds, findStagedRunsOfJobs, type StagedRun } from "../store/index.js";
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
  private readonly staged: DataLoader<string, StagedRun[]>;
  private readonly allocations: DataLoader<string, { cpu: number; memoryMb: number } | null>;

  constructor(deps: LookupDeps) {
    const { mongo } = deps;
    this.users = byId((ids) => deps.users.byIds(ids));
    this.jobs = byId((ids) => findJobsByIds(mongo, ids));
    this.runs = byId((ids) => findRunsByIds(mongo, ids));
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

  /** A run the caller may see; NOT_FOUND when it is missing or someone else's. */
  async run(p: Principal, id: string): Promise<RunDoc> {
    return visible(p, "run", id, await this.runs.load(id));
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

  /** CPU and memory reserved on a node by its running attempts (core/allocations.ts). */
  allocated(nodeId: string): Promise<{ cpu: number; memoryMb: number } | null> {
    return this.allocations.load(nodeId);
  }
}

/**
 * Node leases, the scheduler's side (the lease watch calls it with each pass): an executor's
 * heartbeat renews one lease for every attempt it holds (store/nodes/lease.ts). When a node's lease
 * has lapsed, any scheduler ends its epoch — a compare-and-set on the node document that a renewal
 * landing first beats, and that a renewal landing after cannot undo — and then the RUNNING runs
 * claimed under that epoch (or an earlier one) are queued again as their next attempt, each by the
 * owner of its shard (or by anyone once orphaned: reclaim-rule.ts), through the same fenced write
 * a run's own lease end uses (RunService.reclaimLost: token, status, and the run's claim lease
 * over too, since a claim made just before the end counts from its own time).
 *
 * The node stays marked for a lease after the end (`reclaimUntil`): a claim the executor sent
 * under the epoch before it knew it ended can land after the first look.
 */
import type { Logger } from "../support/index.js";
import { observeRecovery, type RecoveryCause } from "../support/index.js";
import type { RunService } from "../core/index.js";
import { RunStatus, type RunDoc } from "../domain/index.js";
import type { Mongo, NodeLease } from "../store/index.js";
import { clearNodeReclaim, endNodeEpoch, findNodeEpochRuns, findNodeLeasesByEnd, findNodeReclaims } from "../store/index.js";
import type { Clock } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";
import { earlier, reclaimDecision } from "./reclaim-rule.js";

/** Node leases ended, nodes looked at, and runs read per node, per pass. */
const NODES_PER_PASS = 100;
const RUNS_PER_NODE = 1_000;

export interface NodeLeasesDeps {
  mongo: Mongo;
  runs: RunService;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "ownsJob">;
  orphanedAfterMs: number;
  causeOf: (jobId: string, faultAt: number) => RecoveryCause;
}

export interface NodeLeasePass {
  /** Runs queued again (or finished, attempts spent). */
  reclaimed: number;
  /** When this scheduler should look again (a run's claim lease, an orphan's grace, a node's window), or null. */
  lookAt: number | null;
  /** The earliest end of a node lease not ended after `now`, or null (none, or not among those read). */
  nextEnd: number | null;
  /** A page was full: more may be waiting. */
  full: boolean;
}

export class NodeLeases {
  constructor(private readonly deps: NodeLeasesDeps) {}

  /** Ends the lapsed node leases, then queues again the runs of ended epochs that are this scheduler's to. */
  async reclaim(now: number): Promise<NodeLeasePass> {
    const leases = await findNodeLeasesByEnd(this.deps.mongo, NODES_PER_PASS);
    const lapsed = leases.filter((l) => l.leaseUntil && l.leaseUntil.getTime() < now);
    const nextEnd = leases.find((l) => l.leaseUntil && l.leaseUntil.getTime() >= now)?.leaseUntil?.getTime() ?? null;
    for (const lease of lapsed) await this.end(lease, now);
    const marked = await findNodeReclaims(this.deps.mongo, NODES_PER_PASS);
    let reclaimed = 0;
    let lookAt: number | null = null;
    let full = lapsed.length >= NODES_PER_PASS || marked.length >= NODES_PER_PASS;
    for (const node of marked) {
      const pass = await this.reclaimNode(node, now);
      reclaimed += pass.reclaimed;
      lookAt = earlier(lookAt, pass.lookAt);
      full ||= pass.full;
    }
    return { reclaimed, lookAt, nextEnd, full };
  }

  private async end(lease: NodeLease, now: number): Promise<void> {
    const leaseMs = lease.leaseMs ?? 0;
    if (lease.leaseEpoch === undefined || !lease.leaseUntil) return;
    if (!(await endNodeEpoch(this.deps.mongo, lease._id, lease.leaseEpoch, lease.leaseUntil, now, new Date(now + leaseMs)))) return;
    this.deps.log.warn({ nodeId: lease._id, epoch: lease.leaseEpoch, leaseUntil: lease.leaseUntil }, "node lease lapsed: epoch ended, its runs are queued again");
  }

  private async reclaimNode(node: NodeLease, now: number): Promise<Omit<NodeLeasePass, "nextEnd">> {
    const through = node.reclaimThrough;
    if (through === undefined || !node.reclaimUntil) return { reclaimed: 0, lookAt: null, full: false };
    const endedAt = node.reclaimFrom?.getTime() ?? 0;
    const runs = await findNodeEpochRuns(this.deps.mongo, node._id, through, RUNS_PER_NODE);
    let lookAt: number | null = null;
    const due: Array<Promise<boolean>> = [];
    for (const run of runs) {
      // Lost since the node's lease ended, or since its own claim lease ended if claimed later.
      const endsAt = Math.max(endedAt, run.leaseUntil?.getTime() ?? 0);
      const d = reclaimDecision(endsAt, now, this.deps.shards.ownsJob(run.jobId), this.deps.orphanedAfterMs);
      if (d.act) due.push(this.reclaimRun(run, node, endsAt, d.orphan, now));
      else lookAt = earlier(lookAt, d.lookAt);
    }
    // In one turn: the requeues of a node's runs go out as one batched write.
    const reclaimed = (await Promise.all(due)).filter(Boolean).length;
    const window = node.reclaimUntil.getTime();
    if (runs.length === 0 && now > window) await clearNodeReclaim(this.deps.mongo, node._id, through);
    else lookAt = earlier(lookAt, Math.max(window, now) + 1);
    return { reclaimed, lookAt, full: runs.length >= RUNS_PER_NODE };
  }

  private async reclaimRun(run: RunDoc, node: NodeLease, endsAt: number, orphan: boolean, now: number): Promise<boolean> {
    const at = new Date(endsAt).toISOString();
    const done = await this.deps.runs.reclaimLost(run, {
      kind: "LOST_EXECUTOR",
      exitCode: null,
      signal: null,
      error: `executor lost: node lease (epoch ${run.nodeEpoch ?? "?"}) expired at ${at} on node ${node._id}`,
      outputTail: run.outputTail,
      outputTruncated: run.outputTruncated,
    }, now);
    if (!done) return false;
    if (done.status === RunStatus.QUEUED) observeRecovery(orphan ? "shard_moved" : this.deps.causeOf(run.jobId, endsAt), endsAt, this.deps.clock());
    this.deps.log.warn(
      { runId: run._id, nodeId: node._id, nodeEpoch: run.nodeEpoch, leaseUntil: at, status: done.status, attempt: done.attempt },
      done.status === RunStatus.QUEUED ? "executor lost: run queued again" : "executor lost: run finished (attempts spent)",
    );
    return true;
  }
}

/**
 * Writes executors' log batches, fenced: a batch is stored only while its attempt's claim holds
 * the run, so the output of a zombie (an attempt whose lease ran out and whose run was handed to
 * another claim) is refused and cannot mix into the log of the attempt that replaced it.
 *
 * A flush of a whole executor is three round trips whatever the number of runs in it: the claims
 * and the logs' records read together, one insertMany of every chunk, one bulkWrite of the records
 * (after the chunks, so a record never counts bytes that are not stored). Then one bus message per
 * run, which only the API instances with a subscriber to that run receive.
 */
import { logChunkId, logSegmentId, RunStatus, type LogChunkDoc } from "../../domain/index.js";
import { Channels, type Clock, type EventBus } from "../../shared-state/index.js";
import { findLogSegments, findRunClaims, insertLogChunks, recordSegmentWrites, type Mongo, type RunClaimView, type SegmentWrite } from "../../store/index.js";
import type { LogBatch, LogNotice } from "./types.js";

/**
 * Whether the claim with `token` holds the run now. The run's token is its current claim's; a
 * claim taken from the ready queue writes before its confirm lands (the run is still QUEUED with
 * the token before it). A run that ended under this claim still takes its last chunks. A run
 * handed back to the queue, or claimed again, refuses them.
 */
export function claimHolds(run: Pick<RunClaimView, "status" | "fencingToken">, token: number): boolean {
  if (run.status === RunStatus.QUEUED) return run.fencingToken + 1 === token;
  return run.status !== RunStatus.PENDING && run.fencingToken === token;
}

export class LogWriter {
  constructor(private readonly deps: { mongo: Mongo; bus: EventBus; clock: Clock }) {}

  /** Stores what it may of `batches`; returns the ids (`runId:token`) of the logs it refused. */
  async write(batches: readonly LogBatch[]): Promise<Set<string>> {
    const refused = new Set<string>();
    if (batches.length === 0) return refused;
    const { mongo } = this.deps;
    const at = new Date(this.deps.clock());
    const runIds = [...new Set(batches.map((b) => b.runId))];
    const [claims, segs] = await Promise.all([findRunClaims(mongo, runIds), findLogSegments(mongo, batches.map((b) => logSegmentId(b.runId, b.token)))]);
    const runs = new Map(claims.map((r) => [r._id, r]));
    const owners = new Map(segs.map((s) => [s._id, s.nodeId]));
    const docs: LogChunkDoc[] = [];
    const writes: SegmentWrite[] = [];
    const accepted: LogBatch[] = [];
    for (const b of batches) {
      const id = logSegmentId(b.runId, b.token);
      const run = runs.get(b.runId);
      const holder = owners.get(id);
      if (!run || !claimHolds(run, b.token) || (holder !== undefined && holder !== b.nodeId)) {
        refused.add(id);
        continue;
      }
      accepted.push(b);
      for (const c of b.chunks) {
        docs.push({ _id: logChunkId(b.runId, b.token, c.offset), runId: b.runId, ownerId: run.ownerId, attempt: b.attempt, token: b.token, offset: c.offset, size: c.size, stream: c.stream, data: c.data, at });
      }
      writes.push({ id, runId: b.runId, ownerId: run.ownerId, attempt: b.attempt, token: b.token, nodeId: b.nodeId, bytes: b.bytes, truncated: b.truncated, ended: b.ended, at });
    }
    await insertLogChunks(mongo, docs);
    await recordSegmentWrites(mongo, writes);
    await Promise.all(
      accepted.map((b) => {
        const notice: LogNotice = { runId: b.runId, attempt: b.attempt, token: b.token, chunks: b.chunks, ended: b.ended };
        return this.deps.bus.publish(Channels.runLogs(b.runId), JSON.stringify(notice)).catch(() => undefined);
      }),
    );
    return refused;
  }
}

/** Node liveness: nodes that stopped heartbeating. */
import type { Mongo } from "../mongo.js";

/** Marks DEAD the ONLINE or DRAINING nodes whose last heartbeat is before `silentSince`; returns how many. */
export async function markSilentNodesDead(mongo: Mongo, silentSince: number): Promise<number> {
  const res = await mongo.c.nodes.updateMany(
    { status: { $in: ["ONLINE", "DRAINING"] }, lastHeartbeatAt: { $lt: new Date(silentSince) } },
    { $set: { status: "DEAD" } },
  );
  return res.modifiedCount;
}

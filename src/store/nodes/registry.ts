/**
 * The `nodes` collection: one document per executor process life (its id is new at every start),
 * written by that executor only. Readers (the API's node list, submission's per-pool limits) find
 * it by name and status.
 */
import type { Mongo } from "../mongo.js";
import type { NodeDoc, NodeStatus } from "../../domain/index.js";

/** What an executor's heartbeat refreshes in its node document. */
export interface NodeBeat {
  at: Date;
  running: number;
  usage: NodeDoc["usage"];
  /** Set only while the node takes work (a draining node keeps DRAINING). */
  status?: NodeStatus;
}

export class NodeStore {
  constructor(private readonly mongo: Mongo) {}

  async insert(node: NodeDoc): Promise<void> {
    await this.mongo.c.nodes.insertOne(node);
  }

  async setStatus(nodeId: string, status: NodeStatus): Promise<void> {
    await this.mongo.c.nodes.updateOne({ _id: nodeId }, { $set: { status } });
  }

  async beat(nodeId: string, beat: NodeBeat): Promise<void> {
    await this.mongo.c.nodes.updateOne(
      { _id: nodeId },
      { $set: { lastHeartbeatAt: beat.at, running: beat.running, usage: beat.usage, ...(beat.status ? { status: beat.status } : {}) } },
    );
  }

  /** The node stopped: nothing runs on it any more. */
  async markOffline(nodeId: string, at: Date): Promise<void> {
    await this.mongo.c.nodes.updateOne({ _id: nodeId }, { $set: { status: "OFFLINE", running: 0, lastHeartbeatAt: at } });
  }
}

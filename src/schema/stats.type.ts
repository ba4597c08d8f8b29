/** The types of clusterStats / clusterStatsUpdated and forecast (issue #31; docs/cluster-stats.md). */
import { Field, Float, ID, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { NodeStatus, RunStatus } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType()
export class StatusCount {
  @Field(() => RunStatus)
  status!: RunStatus;

  @Field(() => Int)
  count!: number;
}

@ObjectType({ description: "Start lateness (start − scheduled time) of the runs that ended in the window, from the newest 10,000 of them." })
export class LatenessFigures {
  @Field(() => Float, { nullable: true, description: "Median, ms (null: no run started and ended in the window)." })
  p50Ms!: number | null;

  @Field(() => Float, { nullable: true, description: "99th percentile, ms (nearest rank)." })
  p99Ms!: number | null;

  @Field(() => Int, { description: "Runs the percentiles were taken over." })
  samples!: number;

  @Field(() => Boolean, { description: "More runs ended in the window than were sampled (the newest were)." })
  capped!: boolean;
}

@ObjectType()
export class PoolFigures {
  @Field(() => String)
  pool!: string;

  @Field(() => Int, { description: "Runs waiting in the pool: everyone's in its ready queue, staged ones included (administrators); your QUEUED runs (others)." })
  depth!: number;

  @Field(() => Float, { nullable: true, description: "How long the oldest waiting run has waited, ms (null: none waiting)." })
  oldestWaitMs!: number | null;

  @Field(() => ID, { nullable: true })
  oldestRunId!: string | null;
}

@ObjectType({ description: "A node with its capacity and what the runs going on it reserve (clusterStats.nodes)." })
export class NodeFigures {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => NodeStatus)
  status!: NodeStatus;

  @Field(() => [String])
  pools!: string[];

  @Field(() => Int)
  slots!: number;

  @Field(() => Int, { description: "Runs going on the node (its last heartbeat)." })
  running!: number;

  @Field(() => Float)
  cpus!: number;

  @Field(() => Int)
  memoryMb!: number;

  @Field(() => Float, { description: "CPU reserved by the runs going on it." })
  allocatedCpu!: number;

  @Field(() => Int, { description: "Memory reserved by the runs going on it, MB." })
  allocatedMemoryMb!: number;
}

/** A page of nodes with their figures (Relay): the `nodes` query's order and cursors. */
export const { Edge: NodeFiguresEdge, Connection: NodeFiguresConnection } = connectionTypes(NodeFigures, "NodeFigures");
export type NodeFiguresConnection = InstanceType<typeof NodeFiguresConnection>;

@ObjectType({ description: "Every live node's (ONLINE or DRAINING) capacity and what its runs reserve, summed over all of them, whichever page of clusterStats.nodes is read." })
export class CapacityFigures {
  @Field(() => Int, { description: "Live nodes (ONLINE or DRAINING)." })
  nodes!: number;

  @Field(() => Int)
  slots!: number;

  @Field(() => Int, { description: "Runs going on them (their last heartbeats)." })
  running!: number;

  @Field(() => Float)
  cpus!: number;

  @Field(() => Int)
  memoryMb!: number;

  @Field(() => Float, { description: "CPU reserved by the runs going on them." })
  allocatedCpu!: number;

  @Field(() => Int, { description: "Memory reserved by the runs going on them, MB." })
  allocatedMemoryMb!: number;
}

@ObjectType()
export class SchedulerFigures {
  @Field(() => String, { description: "The scheduler's member id (as it heartbeats into the shard membership)." })
  id!: string;

  @Field(() => [Int], { description: "The time-wheel shards it holds the lease of." })
  shards!: number[];
}

@ObjectType({ description: "The cluster's figures over a window (administrators), or your own runs' (others): docs/cluster-stats.md." })
export class ClusterStats {
  @Field(() => DateTime)
  at!: Date;

  @Field(() => String, { description: "The window, an ISO-8601 duration." })
  window!: string;

  @Field(() => String, { description: "CLUSTER: everyone's runs (an administrator); OWN: yours." })
  scope!: string;

  @Field(() => [StatusCount], { description: "PENDING, QUEUED, RUNNING, RETRY_SCHEDULED: runs in them now; final statuses: runs that ended in them within the window." })
  runs!: StatusCount[];

  @Field(() => Int, { description: "Runs that ended within the window." })
  ended!: number;

  @Field(() => Boolean, { description: "Yours only: more than 100,000 of your runs ended in the window and the newest were counted." })
  endedCapped!: boolean;

  @Field(() => Float, { description: "Runs ended a second over the window." })
  throughput!: number;

  @Field(() => LatenessFigures)
  lateness!: LatenessFigures;

  @Field(() => [PoolFigures])
  pools!: PoolFigures[];

  // `nodes(filter, first, after)`: a field resolver (resolvers/stats.resolver.ts), a page of NodeFigures.

  @Field(() => Int, { description: "Every node, whatever its status, on whichever page of `nodes`." })
  nodeCount!: number;

  @Field(() => CapacityFigures, { description: "The live nodes' capacity and allocation summed over every one of them, not only those on the page of `nodes` read." })
  capacity!: CapacityFigures;

  @Field(() => Int, { description: "DEAD runs kept (within the run retention)." })
  deadLetters!: number;

  @Field(() => Int, { description: "Runs that ended DEAD within the window." })
  deadLettersInWindow!: number;

  @Field(() => [SchedulerFigures], { nullable: true, description: "Live schedulers and their shards (administrators; null for others)." })
  schedulers!: SchedulerFigures[] | null;

  @Field(() => Int, { nullable: true, description: "Time-wheel shards in all (KAIROS_SHARDS; administrators)." })
  shardCount!: number | null;

  @Field(() => [Int], { nullable: true, description: "Shards no scheduler holds now: their timers fire when one takes them (administrators)." })
  unownedShards!: number[] | null;
}

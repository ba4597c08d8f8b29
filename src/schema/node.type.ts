import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { NodeStatus } from "./enums.js";
import { NodeIsolation, Resources } from "./resources.type.js";
import { NodeInterpreter } from "./job-kinds.type.js";
import { DateTime, JSONObject } from "./scalars.js";

@ObjectType()
export class NodeCapacity {
  @Field(() => Int)
  slots!: number;

  @Field(() => Float, { description: "CPU cores the node's runs may reserve in total." })
  cpus!: number;

  @Field(() => Int)
  memoryMb!: number;
}

@ObjectType()
export class NodeUsage {
  @Field(() => Float)
  cpuPercent!: number;

  @Field(() => Int)
  memoryMb!: number;

  @Field(() => Float)
  load1!: number;
}

@ObjectType({ description: "An executor node." })
export class ExecutorNode {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  host!: string;

  @Field(() => [String])
  pools!: string[];

  @Field(() => JSONObject)
  labels!: Record<string, string>;

  @Field(() => NodeStatus)
  status!: NodeStatus;

  @Field(() => NodeCapacity)
  capacity!: NodeCapacity;

  @Field(() => Resources, { nullable: true, description: "The most one run may ask for on this node (KAIROS_RUN_MAX)." })
  maxRun!: Resources | null;

  @Field(() => Resources, { nullable: true, description: "What a run gets when its job leaves a resource out (KAIROS_RUN_DEFAULTS)." })
  defaultRun!: Resources | null;

  @Field(() => NodeIsolation, { nullable: true, description: "How this node isolates runs; null for nodes of an older version." })
  isolation!: NodeIsolation | null;

  @Field(() => [NodeInterpreter], { description: "Interpreters this node has for SCRIPT jobs (a script runs only on a node with its interpreter)." })
  interpreters!: NodeInterpreter[];

  @Field(() => Int)
  running!: number;

  @Field(() => NodeUsage)
  usage!: NodeUsage;

  @Field(() => DateTime)
  startedAt!: Date;

  @Field(() => DateTime)
  lastHeartbeatAt!: Date;
}

export const { Edge: ExecutorNodeEdge, Connection: ExecutorNodeConnection } = connectionTypes(ExecutorNode, "ExecutorNode");
export type ExecutorNodeConnection = InstanceType<typeof ExecutorNodeConnection>;

@InputType({ description: "Narrows `nodes`; every field given must match." })
export class NodeFilter {
  @Field(() => String, { nullable: true, description: "Only nodes that pull from this pool." })
  pool?: string | null;

  @Field(() => [NodeStatus], {
    nullable: true,
    description: "Only nodes in one of these states (e.g. [ONLINE, DRAINING]: the live ones; [OFFLINE, DEAD]: those gone). Omitted or null: every state.",
  })
  status?: NodeStatus[] | null;

  @Field(() => String, {
    nullable: true,
    description: "Only nodes whose name starts with this (case-sensitive; 1–255 characters): a node picker's suggestions as the name is typed.",
  })
  namePrefix?: string | null;
}

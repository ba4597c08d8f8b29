import { Field, Float, ID, Int, ObjectType } from "type-graphql";
import { NodeStatus } from "./enums.js";
import { DateTime, JSONObject } from "./scalars.js";

@ObjectType()
export class NodeCapacity {
  @Field(() => Int)
  slots!: number;

  @Field(() => Int)
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

  @Field(() => Int)
  running!: number;

  @Field(() => NodeUsage)
  usage!: NodeUsage;

  @Field(() => DateTime)
  startedAt!: Date;

  @Field(() => DateTime)
  lastHeartbeatAt!: Date;
}

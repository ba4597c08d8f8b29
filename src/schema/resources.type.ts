import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { IsolationMode, NetworkAccess } from "./enums.js";
import { DateTime } from "./scalars.js";
import { connectionTypes } from "./common.type.js";

@ObjectType({ description: "Resources of one run, or of a node." })
export class Resources {
  @Field(() => Float, { description: "CPU cores (a CFS quota; fractions allowed)." })
  cpu!: number;

  @Field(() => Int, { description: "Memory limit in MiB; above it the kernel kills the run (OOM_KILLED)." })
  memoryMb!: number;

  @Field(() => Int, { nullable: true, description: "Most processes and threads at once (not given for node totals)." })
  pids?: number | null;

  @Field(() => Int, { nullable: true, description: "Most MiB in the run's working directory and /tmp together (not given for node totals)." })
  diskMb?: number | null;
}

@InputType({ description: "What a run may use. Left out: the pool's default (KAIROS_RUN_DEFAULTS of its executors)." })
export class ResourcesInput {
  @Field(() => Float, { nullable: true })
  cpu?: number | null;

  @Field(() => Int, { nullable: true })
  memoryMb?: number | null;

  @Field(() => Int, { nullable: true })
  pids?: number | null;

  @Field(() => Int, { nullable: true })
  diskMb?: number | null;
}

@ObjectType({ description: "How a node runs jobs." })
export class NodeIsolation {
  @Field(() => IsolationMode)
  mode!: IsolationMode;

  @Field(() => [String], { description: 'What it enforces, e.g. "namespaces:user,pid,…", "cgroup-v1:memory", "rlimit:fsize", "disk-cap".' })
  enforced!: string[];

  @Field(() => [NetworkAccess], { description: "Network modes a job may ask for on this node." })
  network!: NetworkAccess[];

  @Field(() => [String], { description: "What it does not enforce, and why." })
  notes!: string[];
}

@ObjectType({ description: "What one attempt used, measured by its cgroup." })
export class RunUsage {
  @Field(() => Float, { nullable: true })
  peakMemoryMb!: number | null;

  @Field(() => Float, { nullable: true })
  cpuSeconds!: number | null;
}

@ObjectType({ description: "A running attempt's reservation on a node." })
export class ResourceAllocation {
  @Field(() => ID)
  runId!: string;

  @Field(() => ID)
  nodeId!: string;

  @Field(() => Float)
  cpu!: number;

  @Field(() => Int)
  memoryMb!: number;

  @Field(() => Int)
  pids!: number;

  @Field(() => Int)
  diskMb!: number;

  @Field(() => DateTime, { description: "When the attempt started." })
  since!: Date;
}

/** A page of ResourceAllocation objects (Relay). */
export const { Edge: ResourceAllocationEdge, Connection: ResourceAllocationConnection } = connectionTypes(ResourceAllocation, "ResourceAllocation");
export type ResourceAllocationConnection = InstanceType<typeof ResourceAllocationConnection>;

import { Field, ID, Int, ObjectType } from "type-graphql";
import { LogState, LogStream } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType({ description: "A piece of a run attempt's output: bytes of one stream, at a byte offset of that attempt's log." })
export class LogChunk {
  @Field(() => ID)
  runId!: string;

  @Field(() => Int, { description: "The attempt that printed it." })
  attempt!: number;

  @Field(() => Int, { description: "The fencing token of the attempt's claim: each claim of a run has its own log, with offsets from 0." })
  token!: number;

  @Field(() => Int, { description: "Byte offset (UTF-8) of `data` in the attempt's log. The next chunk is at `offset + size`: resume from there." })
  offset!: number;

  @Field(() => Int, { description: "Bytes of `data` as UTF-8." })
  size!: number;

  @Field(() => LogStream)
  stream!: LogStream;

  @Field(() => String)
  data!: string;
}

@ObjectType({ description: "Where one attempt's log is: live, archived (downloadable with logUrl) or expired." })
export class RunLogStatus {
  @Field(() => Int)
  attempt!: number;

  @Field(() => Int)
  token!: number;

  @Field(() => LogState)
  state!: LogState;

  @Field(() => Int, { description: "Bytes in the log." })
  bytes!: number;

  @Field(() => Boolean, { description: "The attempt printed more than the cap (KAIROS_LOG_MAX_BYTES); a SYSTEM chunk marks the cut." })
  truncated!: boolean;

  @Field(() => Boolean, { description: "The attempt's output is complete." })
  ended!: boolean;

  @Field(() => DateTime, { nullable: true })
  archivedAt!: Date | null;

  @Field(() => DateTime, { nullable: true, description: "When the archive is deleted (KAIROS_LOG_RETENTION)." })
  expiresAt!: Date | null;

  @Field(() => String, { nullable: true, description: "Why logUrl is null, when it is." })
  reason!: string | null;
}

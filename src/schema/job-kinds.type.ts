/** Object types of the job kinds beyond COMMAND (docs/job-kinds.md), and of HTTP request signing. */
import { Field, ID, Int, ObjectType } from "type-graphql";
import { DateTime, JSONObject } from "./scalars.js";

@ObjectType({ description: "HTTP jobs: the request each attempt makes." })
export class HttpRequest {
  @Field(() => String)
  method!: string;

  @Field(() => String)
  url!: string;

  @Field(() => JSONObject)
  headers!: Record<string, string>;

  @Field(() => String, { nullable: true })
  body!: string | null;

  @Field(() => [String], { description: 'Statuses that count as success, e.g. ["2xx"].' })
  successStatuses!: string[];
}

@ObjectType({ description: "The uploaded artifact a SCRIPT or BINARY job runs, as checked when the job was saved." })
export class JobArtifact {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  size!: number;

  @Field(() => String, { description: "Hex SHA-256; nodes run nothing whose hash differs." })
  sha256!: string;
}

@ObjectType({ description: "What an HTTP job's attempt got back." })
export class HttpResponse {
  @Field(() => Int)
  status!: number;

  @Field(() => JSONObject, { description: "Response headers (lower-case names)." })
  headers!: Record<string, string>;

  @Field(() => String, { description: "The body's first 64 KiB, as UTF-8 text." })
  body!: string;

  @Field(() => Boolean, { description: "True when the body was longer than what is kept." })
  bodyTruncated!: boolean;

  @Field(() => Int)
  durationMs!: number;
}

@ObjectType({ description: "An interpreter an executor node has for SCRIPT jobs." })
export class NodeInterpreter {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  path!: string;

  @Field(() => String, { nullable: true })
  version!: string | null;
}

@ObjectType({ description: "Your HTTP jobs' signing secret: shown only here, once. Keep it where your receiver can read it." })
export class HttpSigningSecret {
  @Field(() => String, { description: "The secret; the HMAC-SHA256 key is its UTF-8 bytes." })
  secret!: string;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime, { nullable: true, description: "Until then requests also carry a signature made with the previous secret." })
  previousValidUntil!: Date | null;
}

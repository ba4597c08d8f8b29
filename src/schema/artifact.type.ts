import { Field, ID, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { ArtifactStatus } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType({ description: "An uploaded script or binary, stored on S3; jobs run it only once its upload is COMPLETE." })
export class Artifact {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => Int, { description: "Bytes." })
  size!: number;

  @Field(() => String, { description: "Lowercase hex sha256 of the bytes; the executor checks it before every run." })
  sha256!: string;

  @Field(() => ArtifactStatus)
  status!: ArtifactStatus;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime, { nullable: true })
  completedAt!: Date | null;

  @Field(() => DateTime, { nullable: true, description: "PENDING: when the upload expires and is deleted unless completed." })
  expiresAt!: Date | null;
}

@ObjectType()
export class HttpHeader {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  value!: string;
}

@ObjectType({ description: "Where to upload an artifact's bytes." })
export class ArtifactUpload {
  @Field(() => Artifact)
  artifact!: Artifact;

  @Field(() => String, {
    description:
      "A presigned URL: `PUT` exactly `size` bytes to it (the Content-Length is part of its signature), then call completeArtifactUpload. " +
      "Valid until expiresAt.",
  })
  uploadUrl!: string;

  @Field(() => [HttpHeader], { description: "Headers the PUT must carry besides its body (usually none)." })
  uploadHeaders!: HttpHeader[];

  @Field(() => DateTime)
  expiresAt!: Date;
}

/** A page of Artifact objects (Relay). */
export const { Edge: ArtifactEdge, Connection: ArtifactConnection } = connectionTypes(Artifact, "Artifact");
export type ArtifactConnection = InstanceType<typeof ArtifactConnection>;

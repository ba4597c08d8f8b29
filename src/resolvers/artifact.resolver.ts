import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { ArtifactDoc } from "../domain/index.js";
import { Artifact, ArtifactConnection, ArtifactUpload } from "../schema/index.js";
import { requireSubmitter, requireUser, type Context } from "./context.js";
import { mapPage, pageArgs } from "./pagination.js";

export function toArtifact(a: ArtifactDoc): Artifact {
  return {
    id: a._id,
    ownerId: a.ownerId,
    name: a.name,
    size: a.size,
    sha256: a.sha256,
    status: a.status,
    createdAt: a.createdAt,
    completedAt: a.completedAt,
    expiresAt: a.expiresAt,
  };
}

@Resolver(() => Artifact)
export class ArtifactResolver {
  @Query(() => Artifact, { description: "An artifact you own (admins: any)." })
  async artifact(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Artifact> {
    return toArtifact(await ctx.services.artifacts.get(requireUser(ctx), id));
  }

  @Query(() => ArtifactConnection, { description: "Your artifacts, newest first (admins: everyone's)." })
  async artifacts(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<ArtifactConnection> {
    return mapPage(await ctx.services.artifacts.list(requireUser(ctx), pageArgs(first, after)), toArtifact);
  }

  @Mutation(() => ArtifactUpload, {
    description:
      "Starts an upload of at most KAIROS_ARTIFACT_MAX_BYTES (default 10 MiB): PUT the bytes to uploadUrl, then call completeArtifactUpload. " +
      "An upload not completed in time (KAIROS_ARTIFACT_UPLOAD_TTL, default 1 h) is deleted.",
  })
  async createArtifactUpload(
    @Arg("name", () => String) name: string,
    @Arg("size", () => Int, { description: "Bytes." }) size: number,
    @Arg("sha256", () => String, { description: "The sha256 of the bytes, 64 hex digits." }) sha256: string,
    @Ctx() ctx: Context,
  ): Promise<ArtifactUpload> {
    const up = await ctx.services.artifacts.createUpload(await requireSubmitter(ctx), { name, size, sha256 });
    return {
      artifact: toArtifact(up.artifact),
      uploadUrl: up.uploadUrl,
      uploadHeaders: Object.entries(up.uploadHeaders).map(([n, value]) => ({ name: n, value })),
      expiresAt: up.expiresAt,
    };
  }

  @Mutation(() => Artifact, {
    description:
      "Checks the uploaded bytes against the declared size and sha256: a match is COMPLETE and usable by jobs; " +
      "a mismatch is refused (BAD_USER_INPUT) and the upload deleted.",
  })
  async completeArtifactUpload(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Artifact> {
    return toArtifact(await ctx.services.artifacts.complete(requireUser(ctx), id));
  }

  @Mutation(() => ID, { description: "Deletes the artifact and its bytes; refused (FAILED_PRECONDITION, naming them) while jobs use it. Returns the id." })
  async deleteArtifact(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<string> {
    return ctx.services.artifacts.delete(requireUser(ctx), id);
  }
}

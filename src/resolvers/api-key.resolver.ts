import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { actOnUser, visible } from "../auth/index.js";
import { ApiKeyScope } from "../schema/index.js";
import { DateTime } from "../schema/index.js";
import { ApiKey, ApiKeyConnection, ApiKeyFilter, CreatedApiKey } from "../schema/index.js";
import { requireSession, requireUser, type Context } from "./context.js";
import { toApiKey } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Mutation(() => CreatedApiKey, {
    description:
      "Creates an API key for a service account: yours, or (administrators) any user's. The key acts as its owner, limited by its scope, " +
      "until it expires or is revoked, or its owner is disabled or deleted. It is in the answer this once; only its SHA-256 is stored. " +
      "Needs a login token: an API key cannot create keys.",
  })
  async createApiKey(
    @Arg("name", () => String, { description: "What it is for, 1–64 characters." }) name: string,
    @Arg("scope", () => ApiKeyScope) scope: ApiKeyScope,
    @Ctx() ctx: Context,
    @Arg("expiresAt", () => DateTime, { nullable: true, description: "Omitted: does not expire." }) expiresAt?: Date | null,
    @Arg("userId", () => ID, { nullable: true, description: "Whose key; default yourself. Others: administrators only." }) userId?: string | null,
  ): Promise<CreatedApiKey> {
    const p = requireSession(ctx);
    const ownerId = actOnUser(p, userId ?? p.userId);
    await ctx.services.users.live(ownerId);
    const { key, doc } = await ctx.services.apiKeys.create(ownerId, p.userId, { name, scope, expiresAt: expiresAt ?? null });
    return { key, apiKey: toApiKey(doc) };
  }

  @Query(() => ApiKeyConnection, {
    description:
      "API keys (never the keys themselves), newest first: yours, or (administrators) a user's. Revoked ones are included " +
      "unless filter.revoked says otherwise (revoked: false: only keys not revoked).",
  })
  async apiKeys(
    @Ctx() ctx: Context,
    @Arg("userId", () => ID, { nullable: true, description: "Default yourself. Others: administrators only." }) userId?: string | null,
    @Arg("filter", () => ApiKeyFilter, { nullable: true }) filter?: ApiKeyFilter | null,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<ApiKeyConnection> {
    const p = requireUser(ctx);
    const ownerId = actOnUser(p, userId ?? p.userId);
    return mapPage(await ctx.services.apiKeys.list({ ownerId, revoked: filter?.revoked ?? null }, pageArgs(first, after)), toApiKey);
  }

  @Mutation(() => ApiKey, { description: "Revokes an API key at once (yours, or any for administrators). Revoking again changes nothing." })
  async revokeApiKey(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<ApiKey> {
    const p = requireUser(ctx);
    visible(p, "API key", id, await ctx.services.apiKeys.get(id));
    return toApiKey((await ctx.services.apiKeys.revoke(id))!);
  }
}

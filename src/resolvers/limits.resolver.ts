import { Arg, Ctx, Int, Mutation, Query, Resolver } from "type-graphql";
import { ValidationError } from "../domain/index.js";
import { LoginLockout, LoginLockoutDimension } from "../schema/index.js";
import { requireAdmin, type Context } from "./context.js";

/** Most rows loginLockouts answers. */
export const MAX_LOCKOUTS = 100;

@Resolver()
export class LimitsResolver {
  @Query(() => [LoginLockout], {
    description:
      "Current login waits and lockouts of user names and client addresses, latest-ending first, at most 100 (first). " +
      "Expired ones are not listed. Administrators only.",
  })
  async loginLockouts(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true, defaultValue: MAX_LOCKOUTS, description: "At most this many rows (1–100)." }) first?: number | null,
  ): Promise<LoginLockout[]> {
    requireAdmin(ctx);
    first ??= MAX_LOCKOUTS;
    if (first < 1 || first > MAX_LOCKOUTS) throw new ValidationError("first", `must be between 1 and ${MAX_LOCKOUTS}`);
    const rows = await ctx.services.limits.login.list(first);
    return rows.map((r) => ({
      dimension: r.dimension === "user" ? LoginLockoutDimension.USER : LoginLockoutDimension.ADDRESS,
      key: r.key,
      until: r.until,
      failures: r.failures,
    }));
  }

  @Mutation(() => Boolean, {
    description:
      "Lifts the login lockout (or growing wait) of a user name and/or a client address and forgets their failed attempts. " +
      "True when there was something to lift. Administrators only.",
  })
  async unlockLogin(
    @Ctx() ctx: Context,
    @Arg("username", () => String, { nullable: true }) username?: string | null,
    @Arg("address", () => String, { nullable: true, description: "A client address as the API sees it (see KAIROS_TRUST_PROXY)." })
    address?: string | null,
  ): Promise<boolean> {
    const admin = requireAdmin(ctx);
    if (!username && !address) throw new ValidationError("username", "name a user name, an address, or both");
    const lifted = await ctx.services.limits.login.unlock({ username, address });
    ctx.log.info({ admin: admin.username, username, address, lifted }, "login lockout lifted");
    return lifted;
  }
}

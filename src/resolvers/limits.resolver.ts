import { Arg, Ctx, Int, Mutation, Query, Resolver } from "type-graphql";
import { ValidationError } from "../domain/index.js";
import { LoginLockoutConnection, LoginLockoutDimension } from "../schema/index.js";
import { requireAdmin, type Context } from "./context.js";
import { mapPage, pageArgs } from "./pagination.js";

@Resolver()
export class LimitsResolver {
  @Query(() => LoginLockoutConnection, {
    description:
      "Current login waits and lockouts of user names and client addresses, latest-ending first (then user names before addresses, then by key). " +
      "Expired ones are not listed. A cursor names an entry: waits that begin or end while you page move no other. Administrators only.",
  })
  async loginLockouts(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<LoginLockoutConnection> {
    requireAdmin(ctx);
    const page = await ctx.services.limits.login.page(pageArgs(first, after));
    return mapPage(page, (r) => ({
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

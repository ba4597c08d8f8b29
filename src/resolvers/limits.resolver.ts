import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import { ValidationError } from "../domain/index.js";
import { requireAdmin, type Context } from "./context.js";

@Resolver()
export class LimitsResolver {
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

import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { Role } from "../schema/enums.js";
import { LoginPayload, User } from "../schema/user.type.js";
import { requireAdmin, requireUser, type Context } from "./context.js";
import { toUser } from "./mappers.js";
import { NotFoundError } from "../errors.js";

@Resolver()
export class AuthResolver {
  @Mutation(() => LoginPayload, {
    description:
      "Exchange a user name and password for a JWT. Failed attempts are limited per user name and per client address " +
      "(growing wait, then a lockout an administrator can lift with unlockLogin): RATE_LIMITED with retryAfterSeconds.",
  })
  async login(
    @Arg("username", () => String) username: string,
    @Arg("password", () => String) password: string,
    @Ctx() ctx: Context,
  ): Promise<LoginPayload> {
    const { token, expiresAt, user } = await ctx.services.limits.login.attempt(username, ctx.clientAddress, () =>
      ctx.services.users.login(username, password),
    );
    return { token, expiresAt, user: toUser(user) };
  }

  @Query(() => User, { description: "The caller." })
  async me(@Ctx() ctx: Context): Promise<User> {
    const p = requireUser(ctx);
    const u = await ctx.loaders.user.load(p.userId);
    if (!u) throw new NotFoundError("user", p.userId);
    return toUser(u);
  }

  @Mutation(() => User, { description: "Administrators only." })
  async createUser(
    @Arg("username", () => String) username: string,
    @Arg("password", () => String) password: string,
    @Arg("role", () => Role, { nullable: true, defaultValue: Role.USER }) role: Role,
    @Arg("maxConcurrentRuns", () => Int, { nullable: true, description: "See User.maxConcurrentRuns; omitted or null = no limit." })
    maxConcurrentRuns: number | null | undefined,
    @Ctx() ctx: Context,
  ): Promise<User> {
    requireAdmin(ctx);
    return toUser(await ctx.services.users.create(username, password, role, maxConcurrentRuns ?? null));
  }

  @Query(() => [User], { description: "Every user, by name. Administrators only." })
  async users(@Ctx() ctx: Context): Promise<User[]> {
    requireAdmin(ctx);
    return (await ctx.services.users.list()).map(toUser);
  }

  @Mutation(() => User, {
    description:
      "Sets how many of a user's runs may be RUNNING at once (1–100000), or removes the limit with null. " +
      "Running runs are not stopped by a lower limit; runs waiting for the old limit start at once when it is raised. Administrators only.",
  })
  async setUserConcurrencyLimit(
    @Arg("userId", () => ID) userId: string,
    @Arg("maxConcurrentRuns", () => Int, { nullable: true }) maxConcurrentRuns: number | null,
    @Ctx() ctx: Context,
  ): Promise<User> {
    requireAdmin(ctx);
    const user = await ctx.services.users.setConcurrencyLimit(userId, maxConcurrentRuns ?? null);
    await ctx.services.runs.wakeHeld(userId);
    return toUser(user);
  }
}

import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { actOnUser } from "../auth/index.js";
import { DeletedUserJobs, Role } from "../schema/index.js";
import { DeleteUserResult, LoginPayload, User, UserConnection, UserFilter } from "../schema/index.js";
import { requireAdmin, requireSession, requireUser, type Context } from "./context.js";
import { toUser } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";

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
    return toUser(await ctx.lookups.me(requireUser(ctx)));
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

  @Query(() => UserConnection, { description: "Users, by name (A–Z before a–z). Administrators only." })
  async users(
    @Ctx() ctx: Context,
    @Arg("filter", () => UserFilter, { nullable: true }) filter?: UserFilter | null,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<UserConnection> {
    requireAdmin(ctx);
    const page = pageArgs(first, after);
    return mapPage(await ctx.services.users.list({ role: filter?.role ?? null, usernamePrefix: filter?.usernamePrefix ?? null }, page), toUser);
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

  @Mutation(() => LoginPayload, {
    description:
      "Changes your password (8–256 characters, not your user name, not a very common password). Every token issued before " +
      "is revoked, open subscriptions included; the answer carries a fresh token for this session. Needs a login token, not an API key.",
  })
  async changePassword(
    @Arg("currentPassword", () => String) currentPassword: string,
    @Arg("newPassword", () => String) newPassword: string,
    @Ctx() ctx: Context,
  ): Promise<LoginPayload> {
    const { token, expiresAt, user } = await ctx.services.users.changePassword(requireSession(ctx), currentPassword, newPassword);
    return { token, expiresAt, user: toUser(user) };
  }

  @Mutation(() => User, {
    description:
      "Revokes every token of the user issued so far (open subscriptions are closed). Yours, or anyone's for administrators. " +
      "API keys are not affected: revoke those with revokeApiKey.",
  })
  async revokeTokens(@Arg("userId", () => ID) userId: string, @Ctx() ctx: Context): Promise<User> {
    const p = requireUser(ctx);
    return toUser(await ctx.services.users.revokeTokens(actOnUser(p, userId)));
  }

  @Mutation(() => User, {
    description:
      "The user can no longer log in; their tokens and API keys are refused and open subscriptions closed. Their jobs keep running " +
      "(pause them or delete the user to stop them). Administrators only; not yourself.",
  })
  async disableUser(@Arg("userId", () => ID) userId: string, @Ctx() ctx: Context): Promise<User> {
    const p = requireAdmin(ctx, userId);
    return toUser(await ctx.services.users.setDisabled(p, userId, true));
  }

  @Mutation(() => User, { description: "Undoes disableUser: earlier tokens and keys that have not expired work again. Administrators only." })
  async enableUser(@Arg("userId", () => ID) userId: string, @Ctx() ctx: Context): Promise<User> {
    const p = requireAdmin(ctx, userId);
    return toUser(await ctx.services.users.setDisabled(p, userId, false));
  }

  @Mutation(() => DeleteUserResult, {
    description:
      "Deletes a user: their tokens and keys stop working at once, their jobs stop firing and are kept (paused, ownerDeleted) or " +
      "deleted as `jobs` says, their open runs are cancelled, their API keys deleted; their DAGs, DAG schedules and DAG runs are deleted " +
      "either way (running DAG runs cancelled first). Administrators only; not yourself.",
  })
  async deleteUser(
    @Arg("userId", () => ID) userId: string,
    @Arg("jobs", () => DeletedUserJobs) jobs: DeletedUserJobs,
    @Ctx() ctx: Context,
  ): Promise<DeleteUserResult> {
    const p = requireAdmin(ctx, userId);
    return ctx.services.users.delete(p, userId, jobs);
  }
}

import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import { Role } from "../schema/enums.js";
import { LoginPayload, User } from "../schema/user.type.js";
import { requireAdmin, requireUser, type Context } from "./context.js";
import { toUser } from "./mappers.js";
import { NotFoundError } from "../errors.js";

@Resolver()
export class AuthResolver {
  @Mutation(() => LoginPayload, { description: "Exchange a user name and password for a JWT." })
  async login(
    @Arg("username", () => String) username: string,
    @Arg("password", () => String) password: string,
    @Ctx() ctx: Context,
  ): Promise<LoginPayload> {
    const { token, expiresAt, user } = await ctx.services.users.login(username, password);
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
    @Ctx() ctx: Context,
  ): Promise<User> {
    requireAdmin(ctx);
    return toUser(await ctx.services.users.create(username, password, role));
  }
}

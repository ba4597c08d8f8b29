import { Ctx, Mutation, Resolver } from "type-graphql";
import { HttpSigningSecret } from "../schema/index.js";
import { requireSession, type Context } from "./context.js";

@Resolver()
export class HttpSigningResolver {
  @Mutation(() => HttpSigningSecret, {
    description:
      "Makes a new signing secret for your HTTP jobs' requests and shows it (the only time it is shown). The previous one keeps signing, as a second v1 of Kairos-Signature, for 24 h. Needs a password login, not an API key.",
  })
  async rotateHttpSigningSecret(@Ctx() ctx: Context): Promise<HttpSigningSecret> {
    const caller = requireSession(ctx);
    const s = await ctx.services.httpSigning.rotate(caller.userId);
    return { secret: s.current, createdAt: s.createdAt, previousValidUntil: s.previousUntil };
  }
}

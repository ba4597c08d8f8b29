/** What the `users` and `apiKeys` lists may be narrowed to. */
import { Field, InputType } from "type-graphql";
import { Role } from "./enums.js";

@InputType({ description: "Narrows `users`; every field given must match." })
export class UserFilter {
  @Field(() => Role, { nullable: true, description: "Only users of this role." })
  role?: Role | null;

  @Field(() => String, {
    nullable: true,
    description: "Only users whose name starts with this (case-sensitive; 1–64 of the characters a user name has: A–Z, a–z, 0–9, _ . @ -).",
  })
  usernamePrefix?: string | null;
}

@InputType({ description: "Narrows `apiKeys`; every field given must match." })
export class ApiKeyFilter {
  @Field(() => Boolean, {
    nullable: true,
    description: "false: only keys not revoked (expired ones included: see expiresAt); true: only revoked keys; omitted or null: both.",
  })
  revoked?: boolean | null;
}

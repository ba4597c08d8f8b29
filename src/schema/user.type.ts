import { Field, ID, Int, ObjectType } from "type-graphql";
import { Role } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType()
export class User {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  username!: string;

  @Field(() => Role)
  role!: Role;

  @Field(() => Int, {
    nullable: true,
    description: "How many of this user's runs may be RUNNING at once across all executors; null = no limit. Runs over the limit wait QUEUED without holding executor slots.",
  })
  maxConcurrentRuns!: number | null;

  @Field(() => DateTime)
  createdAt!: Date;
}

@ObjectType()
export class LoginPayload {
  @Field(() => String, { description: "JWT; send as `Authorization: Bearer <token>` or in the WebSocket connectionParams." })
  token!: string;

  @Field(() => DateTime)
  expiresAt!: Date;

  @Field(() => User)
  user!: User;
}

import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { ApiKeyScope, Role } from "./enums.js";
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

  @Field(() => Boolean, { description: "A disabled user cannot log in; their tokens and API keys are refused." })
  disabled!: boolean;

  @Field(() => DateTime)
  createdAt!: Date;
}

export const { Edge: UserEdge, Connection: UserConnection } = connectionTypes(User, "User");
export type UserConnection = InstanceType<typeof UserConnection>;

@ObjectType()
export class DeleteUserResult {
  @Field(() => ID)
  userId!: string;

  @Field(() => Int, { description: "Jobs kept, paused and marked ownerDeleted (jobs: KEEP)." })
  jobsKept!: number;

  @Field(() => Int, { description: "Jobs deleted (jobs: DELETE)." })
  jobsDeleted!: number;

  @Field(() => Int, { description: "Open runs cancelled (a RUNNING one is killed by its executor)." })
  runsCancelled!: number;

  @Field(() => Int)
  apiKeysDeleted!: number;

  @Field(() => Int, { description: "DAGs deleted with their schedules (whatever `jobs` says)." })
  dagsDeleted!: number;

  @Field(() => Int, { description: "DAG runs deleted (running ones cancelled first, their task runs with them)." })
  dagRunsDeleted!: number;
}

@ObjectType({ description: "An API key of a service account. The key itself is shown once, by createApiKey." })
export class ApiKey {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: "The key's first characters (`kairos_` and 6 more), to tell keys apart." })
  prefix!: string;

  @Field(() => ApiKeyScope)
  scope!: ApiKeyScope;

  @Field(() => DateTime, { nullable: true, description: "Null: does not expire." })
  expiresAt!: Date | null;

  @Field(() => DateTime, { nullable: true, description: "When it was last used (recorded at most once a minute)." })
  lastUsedAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  revokedAt!: Date | null;

  @Field(() => DateTime)
  createdAt!: Date;
}

export const { Edge: ApiKeyEdge, Connection: ApiKeyConnection } = connectionTypes(ApiKey, "ApiKey");
export type ApiKeyConnection = InstanceType<typeof ApiKeyConnection>;

@ObjectType()
export class CreatedApiKey {
  @Field(() => String, {
    description: "The key: send it as `Authorization: Bearer <key>` (or in the WebSocket connectionParams). Shown this once; only its hash is stored.",
  })
  key!: string;

  @Field(() => ApiKey)
  apiKey!: ApiKey;
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

/** What a login lockout is keyed by (an API-only enum: the rate limiter's "user" | "address"). */
export const LoginLockoutDimension = { USER: "USER", ADDRESS: "ADDRESS" } as const;
export type LoginLockoutDimension = (typeof LoginLockoutDimension)[keyof typeof LoginLockoutDimension];
registerEnumType(LoginLockoutDimension, {
  name: "LoginLockoutDimension",
  valuesConfig: {
    USER: { description: "A user name (as typed at login)." },
    ADDRESS: { description: "A client address as the API sees it (see KAIROS_TRUST_PROXY)." },
  },
});

@ObjectType({ description: "A user name or client address that must wait before its next login attempt (a growing wait, or a lockout)." })
export class LoginLockout {
  @Field(() => LoginLockoutDimension)
  dimension!: LoginLockoutDimension;

  @Field(() => String, { description: "The user name or client address; pass it to unlockLogin to lift the wait." })
  key!: string;

  @Field(() => DateTime, { description: "When the wait or lockout ends unless an administrator lifts it first." })
  until!: Date;

  @Field(() => Int, { nullable: true, description: "Failed logins counted in the window (KAIROS_LOGIN_WINDOW), when known." })
  failures!: number | null;
}

/** A page of login lockouts (Relay): latest-ending first, then user names before addresses, then by key. */
export const { Edge: LoginLockoutEdge, Connection: LoginLockoutConnection } = connectionTypes(LoginLockout, "LoginLockout");
export type LoginLockoutConnection = InstanceType<typeof LoginLockoutConnection>;

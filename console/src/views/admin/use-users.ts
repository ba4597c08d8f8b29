/** The users an administrator manages, and what can be done to them. */
import { useCallback } from "react";
import { useMutation, useQuery } from "urql";
import {
  ConsoleAdminCreateUserDocument,
  ConsoleAdminDeleteUserDocument,
  ConsoleAdminDisableUserDocument,
  ConsoleAdminEnableUserDocument,
  ConsoleAdminRevokeTokensDocument,
  ConsoleAdminSetConcurrencyDocument,
  ConsoleAdminUsersDocument,
  type ConsoleAdminUserFieldsFragment,
  type DeletedUserJobs,
  type Role,
} from "../../../../generated/client/graphql";

export type AdminUser = ConsoleAdminUserFieldsFragment;

export function useUsers() {
  const [result, reexecute] = useQuery({ query: ConsoleAdminUsersDocument, requestPolicy: "cache-and-network" });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  return { users: result.data?.users ?? null, error: result.error, refresh };
}

/** Each mutation resolves with urql's result: `error` carries the API's message. */
export function useUserMutations() {
  const [, create] = useMutation(ConsoleAdminCreateUserDocument);
  const [, disable] = useMutation(ConsoleAdminDisableUserDocument);
  const [, enable] = useMutation(ConsoleAdminEnableUserDocument);
  const [, setLimit] = useMutation(ConsoleAdminSetConcurrencyDocument);
  const [, revokeTokens] = useMutation(ConsoleAdminRevokeTokensDocument);
  const [, remove] = useMutation(ConsoleAdminDeleteUserDocument);
  return {
    create: (v: { username: string; password: string; role: Role; maxConcurrentRuns: number | null }) => create(v),
    disable: (userId: string) => disable({ userId }),
    enable: (userId: string) => enable({ userId }),
    setLimit: (userId: string, maxConcurrentRuns: number | null) => setLimit({ userId, maxConcurrentRuns }),
    revokeTokens: (userId: string) => revokeTokens({ userId }),
    remove: (userId: string, jobs: DeletedUserJobs) => remove({ userId, jobs }),
  };
}

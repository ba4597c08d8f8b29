/** The users an administrator manages, and what can be done to them. */
import { useCallback, useState } from "react";
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

/** Users per page of the users panel. */
export const USERS_PAGE = 50;

/**
 * A page of users by name: `prefix` (trimmed; empty: every user) narrows them to the names that
 * start with it; `next`/`prev` walk the pages (a stack of cursors, the first page's null).
 */
export function useUsers() {
  const [prefix, setPrefixState] = useState("");
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const after = cursors[cursors.length - 1];
  const usernamePrefix = prefix.trim();
  const [result, reexecute] = useQuery({
    query: ConsoleAdminUsersDocument,
    variables: { filter: usernamePrefix ? { usernamePrefix } : null, first: USERS_PAGE, after },
    requestPolicy: "cache-and-network",
  });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  const conn = result.data?.users;
  const setPrefix = useCallback((p: string) => {
    setPrefixState(p);
    setCursors([null]);
  }, []);
  return {
    users: conn ? conn.edges.map((e) => e.node) : null,
    error: result.error,
    refresh,
    prefix,
    setPrefix,
    page: cursors.length,
    hasPrev: cursors.length > 1,
    hasNext: conn?.pageInfo.hasNextPage ?? false,
    prev: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    next: () => {
      const end = conn?.pageInfo.endCursor;
      if (end) setCursors((c) => [...c, end]);
    },
  };
}

export type UsersPage = ReturnType<typeof useUsers>;

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

/** The users an administrator manages, and what can be done to them. */
import { useCallback, useState } from "react";
import { useMutation, useQuery } from "urql";
import { useCursorStack } from "../../ui/paging";
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
  const pages = useCursorStack();
  const { after, reset } = pages;
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
    reset();
  }, [reset]);
  return {
    users: conn ? conn.edges.map((e) => e.node) : null,
    error: result.error,
    refresh,
    prefix,
    setPrefix,
    page: pages.page,
    hasPrev: pages.hasPrev,
    hasNext: conn?.pageInfo.hasNextPage ?? false,
    prev: pages.prev,
    next: () => pages.next(conn?.pageInfo),
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

/** API keys (never the keys themselves): yours, or, for administrators, another user's. */
import { useCallback, useState } from "react";
import { useMutation, useQuery } from "urql";
import { useCursorStack } from "../../ui/paging";
import {
  ConsoleApiKeysDocument,
  ConsoleCreateApiKeyDocument,
  ConsoleRevokeApiKeyDocument,
  type ApiKeyScope,
  type ConsoleApiKeyFieldsFragment,
} from "../../../../generated/client/graphql";

export type ApiKeyRow = ConsoleApiKeyFieldsFragment;

/** Keys per page of the keys panel. */
export const KEYS_PAGE = 25;

/**
 * A page of API keys, newest first. `userId` null: the caller's own keys. `hideRevoked` asks
 * for the keys not revoked only; `next`/`prev` walk the pages (a stack of cursors).
 */
export function useApiKeys(userId: string | null) {
  const [hideRevoked, setHideRevokedState] = useState(false);
  const pages = useCursorStack();
  const { after, reset } = pages;
  const [result, reexecute] = useQuery({
    query: ConsoleApiKeysDocument,
    variables: { userId, filter: hideRevoked ? { revoked: false } : null, first: KEYS_PAGE, after },
    requestPolicy: "cache-and-network",
    // An empty list names no type, so the document cache would not know a new key changes it.
    context: KEY_CONTEXT,
  });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  const conn = result.data?.apiKeys;
  const setHideRevoked = useCallback((hide: boolean) => {
    setHideRevokedState(hide);
    reset();
  }, [reset]);
  return {
    keys: conn ? conn.edges.map((e) => e.node) : null,
    error: result.error,
    refresh,
    hideRevoked,
    setHideRevoked,
    page: pages.page,
    hasPrev: pages.hasPrev,
    hasNext: conn?.pageInfo.hasNextPage ?? false,
    prev: pages.prev,
    next: () => pages.next(conn?.pageInfo),
  };
}

const KEY_CONTEXT = { additionalTypenames: ["ApiKey"] };

export function useApiKeyMutations() {
  const [, create] = useMutation(ConsoleCreateApiKeyDocument);
  const [, revoke] = useMutation(ConsoleRevokeApiKeyDocument);
  return {
    create: (v: { name: string; scope: ApiKeyScope; expiresAt: string | null; userId: string | null }) => create(v),
    revoke: (id: string) => revoke({ id }),
  };
}

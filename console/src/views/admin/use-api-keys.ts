/** API keys (never the keys themselves): yours, or, for administrators, another user's. */
import { useCallback } from "react";
import { useMutation, useQuery } from "urql";
import {
  ConsoleApiKeysDocument,
  ConsoleCreateApiKeyDocument,
  ConsoleRevokeApiKeyDocument,
  type ApiKeyScope,
  type ConsoleApiKeyFieldsFragment,
} from "../../../../generated/client/graphql";

export type ApiKeyRow = ConsoleApiKeyFieldsFragment;

/** `userId` null: the caller's own keys. */
export function useApiKeys(userId: string | null) {
  const [result, reexecute] = useQuery({
    query: ConsoleApiKeysDocument,
    variables: { userId },
    requestPolicy: "cache-and-network",
    // An empty list names no type, so the document cache would not know a new key changes it.
    context: KEY_CONTEXT,
  });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  return { keys: result.data?.apiKeys ?? null, error: result.error, refresh };
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

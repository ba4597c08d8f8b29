/**
 * The nodes and their running attempts, refreshed every few seconds. The API has no subscription
 * for nodes (their heartbeats and allocations change too often to push each one), so this view
 * polls with requestPolicy "network-only", and only while the tab is visible (ui/poll.ts).
 */
import { useCallback } from "react";
import { useQuery } from "urql";
import { ConsoleNodeAllocationsDocument, ConsoleNodesListDocument } from "../../../../generated/client/graphql";
import { usePoll } from "../../ui/poll";

export const REFRESH_MS = 5_000;

export function useNodes() {
  const [result, reexecute] = useQuery({ query: ConsoleNodesListDocument, requestPolicy: "cache-and-network" });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  usePoll(refresh, REFRESH_MS);
  return { nodes: result.data?.nodes ?? null, error: result.error, fetching: result.fetching, refresh };
}

/** The first page of a node's running attempts (newest first), refreshed while shown. */
export function useNodeAllocations(nodeId: string, first = 50) {
  const [result, reexecute] = useQuery({ query: ConsoleNodeAllocationsDocument, variables: { nodeId, first }, requestPolicy: "network-only" });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  usePoll(refresh, REFRESH_MS);
  const conn = result.data?.resources;
  return {
    allocations: conn ? conn.edges.map((e) => e.node) : null,
    more: conn?.pageInfo.hasNextPage ?? false,
    error: result.error,
  };
}

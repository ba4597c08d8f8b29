/**
 * The nodes, a page at a time, and their running attempts, refreshed every few seconds. The API
 * has no subscription for nodes (their heartbeats and allocations change too often to push each
 * one), so this view polls with requestPolicy "network-only", and only while the tab is visible
 * (ui/poll.ts).
 */
import { useCallback, useState } from "react";
import { useQuery } from "urql";
import { ConsoleNodeAllocationsDocument, ConsoleNodesListDocument, type NodeStatus } from "../../../../generated/client/graphql";
import { useCursorStack } from "../../ui/paging";
import { usePoll } from "../../ui/poll";

export const REFRESH_MS = 5_000;

/** Nodes per page of the nodes view. */
export const NODES_PAGE = 50;

/** The state choices of the nodes view: a name, and the states it lists (none: every state). */
export const STATE_CHOICES: ReadonlyArray<{ value: string; label: string; status: NodeStatus[] | null }> = [
  { value: "", label: "any", status: null },
  { value: "live", label: "live (online or draining)", status: ["ONLINE", "DRAINING"] },
  { value: "gone", label: "gone (offline or dead)", status: ["OFFLINE", "DEAD"] },
  { value: "ONLINE", label: "online", status: ["ONLINE"] },
  { value: "DRAINING", label: "draining", status: ["DRAINING"] },
  { value: "OFFLINE", label: "offline", status: ["OFFLINE"] },
  { value: "DEAD", label: "dead", status: ["DEAD"] },
];

/**
 * A page of the nodes by name (the latest start of a name first): `pool` (trimmed; empty: every
 * pool) and `state` (a STATE_CHOICES value) narrow them; `next`/`prev` walk the pages (a stack of
 * cursors, the first page's null). A change of filter starts again at the first page.
 */
export function useNodes() {
  const [pool, setPoolState] = useState("");
  const [state, setStateState] = useState("");
  const pages = useCursorStack();
  const { after, reset } = pages;
  const status = STATE_CHOICES.find((c) => c.value === state)?.status ?? null;
  const poolName = pool.trim();
  const filter = poolName || status ? { ...(poolName ? { pool: poolName } : {}), ...(status ? { status } : {}) } : null;
  const [result, reexecute] = useQuery({ query: ConsoleNodesListDocument, variables: { filter, first: NODES_PAGE, after }, requestPolicy: "cache-and-network" });
  const refresh = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  usePoll(refresh, REFRESH_MS);
  const conn = result.data?.nodes;
  const setPool = useCallback((p: string) => {
    setPoolState(p);
    reset();
  }, [reset]);
  const setState = useCallback((s: string) => {
    setStateState(s);
    reset();
  }, [reset]);
  return {
    nodes: conn ? conn.edges.map((e) => e.node) : null,
    error: result.error,
    fetching: result.fetching,
    refresh,
    pool,
    setPool,
    state,
    setState,
    filtered: filter !== null,
    page: pages.page,
    hasPrev: pages.hasPrev,
    hasNext: conn?.pageInfo.hasNextPage ?? false,
    prev: pages.prev,
    next: () => pages.next(conn?.pageInfo),
  };
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

/**
 * What the runs filter's node picker offers: the nodes whose name starts with what was typed
 * (`nodes(filter: { namePrefix })`, by name, the latest start of a name first), a page at a time
 * ("More nodes" reads the next one), so any of thousands of nodes can be found; and the name of the
 * node the filter holds (its id is what the address keeps).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { CombinedError } from "@urql/core";
import { useClient, useQuery } from "urql";
import { ConsoleFilterNodeDocument, ConsoleNodeSuggestionsDocument, type ConsoleFilterNodeQuery, type ConsoleNodeSuggestionsQuery } from "../../../../generated/client/graphql";

export type NodeSuggestion = ConsoleNodeSuggestionsQuery["nodes"]["edges"][number]["node"];

/** Nodes a page of suggestions shows. */
export const SUGGESTION_PAGE = 20;

export interface NodeSuggestions {
  nodes: NodeSuggestion[];
  /** False until the first page for this prefix has been answered. */
  loaded: boolean;
  loading: boolean;
  hasNext: boolean;
  error: CombinedError | Error | null;
  loadMore(): void;
}

/** The nodes whose name starts with `prefix` ("": every node); nothing is read while `prefix` is null (the picker is closed). */
export function useNodeSuggestions(prefix: string | null): NodeSuggestions {
  const client = useClient();
  const [state, setState] = useState<{ prefix: string | null; nodes: NodeSuggestion[]; cursor: string | null; hasNext: boolean; loaded: boolean }>({
    prefix: null,
    nodes: [],
    cursor: null,
    hasNext: false,
    loaded: false,
  });
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<CombinedError | Error | null>(null);
  const current = useRef(prefix);
  current.current = prefix;
  const busy = useRef(false);

  const fetchPage = useCallback(
    async (forPrefix: string, after: string | null) => {
      busy.current = true;
      setLoading(true);
      try {
        const r = await client.query(ConsoleNodeSuggestionsDocument, { namePrefix: forPrefix || null, first: SUGGESTION_PAGE, after }, { requestPolicy: "network-only" }).toPromise();
        // An answer for what is no longer typed is dropped.
        if (current.current !== forPrefix) return;
        if (r.error || !r.data) {
          setError(r.error ?? new Error("no answer"));
          setState((s) => ({ ...s, prefix: forPrefix, loaded: true }));
          return;
        }
        const c = r.data.nodes;
        const page = c.edges.map((e) => e.node);
        setError(null);
        setState((s) => ({
          prefix: forPrefix,
          nodes: after === null || s.prefix !== forPrefix ? page : [...s.nodes, ...page],
          cursor: c.pageInfo.endCursor ?? null,
          hasNext: c.pageInfo.hasNextPage,
          loaded: true,
        }));
      } finally {
        if (current.current === forPrefix) {
          busy.current = false;
          setLoading(false);
        }
      }
    },
    [client],
  );

  useEffect(() => {
    if (prefix === null) return;
    setState({ prefix, nodes: [], cursor: null, hasNext: false, loaded: false });
    setError(null);
    busy.current = false;
    void fetchPage(prefix, null);
  }, [fetchPage, prefix]);

  const loadMore = useCallback(() => {
    if (busy.current || prefix === null || state.prefix !== prefix || !state.hasNext || !state.cursor) return;
    void fetchPage(prefix, state.cursor);
  }, [fetchPage, prefix, state.prefix, state.hasNext, state.cursor]);

  const mine = prefix !== null && state.prefix === prefix;
  return { nodes: mine ? state.nodes : [], loaded: mine && state.loaded, loading, hasNext: mine && state.hasNext, error: mine ? error : null, loadMore };
}

/** The node `nodeId` names, to show which it is (null while unknown); `gone` once the API says no node has that id. */
export function useNodeName(nodeId: string): { name: string | null; node: ChosenNode | null; gone: boolean } {
  const [r] = useQuery({ query: ConsoleFilterNodeDocument, variables: { id: nodeId }, pause: !nodeId, requestPolicy: "cache-first" });
  if (!nodeId || r.data?.node.id !== nodeId) return { name: null, node: null, gone: !!nodeId && !r.fetching && r.error?.graphQLErrors.some((e) => e.extensions?.code === "NOT_FOUND") === true };
  return { name: r.data.node.name, node: r.data.node, gone: false };
}

export type ChosenNode = ConsoleFilterNodeQuery["node"];

/**
 * Executor nodes' names by id, to show a name where a run names its node by id: the first 100
 * nodes by name (a node past them shows as its id).
 */
import { useMemo } from "react";
import { useQuery } from "urql";
import { ConsoleRunsNodesDocument } from "../../../../generated/client/graphql";

export function useNodeNames(): ReadonlyMap<string, string> {
  const [nodes] = useQuery({ query: ConsoleRunsNodesDocument, requestPolicy: "cache-first" });
  return useMemo(() => new Map((nodes.data?.nodes.edges ?? []).map(({ node: n }) => [n.id, n.name])), [nodes.data]);
}

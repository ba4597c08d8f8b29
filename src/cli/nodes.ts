/** `kairos get nodes`: every page of the nodes (by name), optionally of one pool, in some states. */
import { CliNodesDocument, type CliNodesQuery, type NodeStatus } from "../../generated/client/graphql.js";
import type { Ctx } from "./context.js";
import { CliError } from "./errors.js";

const NODE_STATUSES = ["ONLINE", "DRAINING", "OFFLINE", "DEAD"];
/** Names for several states at once. */
const STATUS_GROUPS: Record<string, string[]> = { LIVE: ["ONLINE", "DRAINING"], GONE: ["OFFLINE", "DEAD"] };
const PAGE = 100;

export type CliNode = CliNodesQuery["nodes"]["edges"][number]["node"];

/** `--status ONLINE,DRAINING` (or `live`, `gone`) checked; undefined: every state. */
export function nodeStatuses(value: string | undefined): NodeStatus[] | undefined {
  if (value === undefined) return undefined;
  const words = value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  const wrong = words.find((s) => !NODE_STATUSES.includes(s) && !STATUS_GROUPS[s]);
  if (words.length === 0 || wrong) {
    const what = wrong ? `"${wrong}" is not a node state` : "no state given";
    throw new CliError(`--status: ${what}: give one or more of ${NODE_STATUSES.join(", ")} (or live: ONLINE,DRAINING; gone: OFFLINE,DEAD), separated by commas`);
  }
  return [...new Set(words.flatMap((s) => STATUS_GROUPS[s] ?? [s]))] as NodeStatus[];
}

/** Every node matching the filter, by name (the latest start of a name first), read a page of 100 at a time. */
export async function listNodes(ctx: Ctx, filter: { pool?: string; status?: NodeStatus[] }): Promise<CliNode[]> {
  const api = await ctx.api();
  const out: CliNode[] = [];
  const f = { ...(filter.pool !== undefined ? { pool: filter.pool } : {}), ...(filter.status ? { status: filter.status } : {}) };
  let after: string | null = null;
  for (;;) {
    const page: CliNodesQuery = await api.request(CliNodesDocument, { filter: Object.keys(f).length ? f : null, first: PAGE, after });
    out.push(...page.nodes.edges.map((e) => e.node));
    if (!page.nodes.pageInfo.hasNextPage) return out;
    after = page.nodes.pageInfo.endCursor ?? null;
  }
}

/** DAG test helpers: create, trigger and wait for DAG runs over the real API. */
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";

export interface TaskRow {
  key: string;
  mapIndex: number | null;
  status: string;
  attempt: number;
  mapped: boolean;
  note: string | null;
  result: unknown;
  run: { id: string; status: string; startedAt: string | null; finishedAt: string | null; attempt: number; error: string | null; outputTail: string | null } | null;
}

export interface DagRunView {
  id: string;
  status: string;
  tasks: TaskRow[];
}

/** `DagRun.tasks` asked as a Relay page: `first` rows of `fields`. */
export const tasksPage = (first: number, fields: string) => `tasks(first: ${first}) { edges { node { ${fields} } } }`;

/** A DAG run type as the API answers it: its `tasks` a page (edges of nodes) rather than a list. */
export type AsRead<R extends { tasks: unknown[] }> = Omit<R, "tasks"> & { tasks: { edges: Array<{ node: R["tasks"][number] }> } };

/** A DAG run read with tasksPage, its page's rows as a list. */
export function listTasks<R extends { tasks: unknown[] }>(r: AsRead<R>): R {
  return { ...r, tasks: r.tasks.edges.map((e) => e.node) } as unknown as R;
}

const RUN_FIELDS = `id status ${tasksPage(400, "key mapIndex status attempt mapped note result run { id status startedAt finishedAt attempt error outputTail }")}`;

export type TaskSpec = { key: string; command: string; dependsOn?: string[]; trigger?: string; mapOver?: string; retry?: Record<string, unknown> };

export function tasksInput(tasks: TaskSpec[]): Array<Record<string, unknown>> {
  return tasks.map((t) => ({
    key: t.key,
    spec: { kind: "COMMAND", command: t.command, timeout: "PT1M" },
    dependsOn: t.dependsOn ?? [],
    ...(t.trigger ? { trigger: t.trigger } : {}),
    ...(t.mapOver ? { mapOver: t.mapOver } : {}),
    ...(t.retry ? { retry: t.retry } : {}),
  }));
}

export async function createDag(url: string, token: string, name: string, tasks: TaskSpec[], extra: Record<string, unknown> = {}): Promise<string> {
  const r = await gqlOk<{ createDag: { id: string } }>(url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name, tasks: tasksInput(tasks), ...extra } }, token);
  return r.createDag.id;
}

export async function triggerDag(url: string, token: string, id: string, params?: Record<string, unknown>): Promise<string> {
  const r = await gqlOk<{ triggerDag: { id: string } }>(url, `mutation($id: ID!, $params: JSONObject) { triggerDag(id: $id, params: $params) { id } }`, { id, params }, token);
  return r.triggerDag.id;
}

export async function readDagRun(url: string, token: string, id: string): Promise<DagRunView> {
  const r = await gqlOk<{ dagRun: AsRead<DagRunView> }>(url, `query($id: ID!) { dagRun(id: $id) { ${RUN_FIELDS} } }`, { id }, token);
  return listTasks<DagRunView>(r.dagRun);
}

export async function finishedDagRun(url: string, token: string, id: string, timeoutMs = 60_000): Promise<DagRunView> {
  return waitFor(async () => {
    const run = await readDagRun(url, token, id);
    return run.status !== "RUNNING" ? run : null;
  }, timeoutMs, 100);
}

export const row = (run: DagRunView, key: string, mapIndex: number | null = null): TaskRow => {
  const r = run.tasks.find((t) => t.key === key && t.mapIndex === mapIndex);
  if (!r) throw new Error(`no task ${key}[${mapIndex}] in ${JSON.stringify(run.tasks.map((t) => [t.key, t.mapIndex]))}`);
  return r;
};

export { gql, gqlOk, waitFor };

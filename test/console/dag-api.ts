/** DAGs arranged through the API for the console's DAG tests (dags.test.ts, dags-mapped.test.ts). */
import { gqlOk } from "../helpers/graphql.js";
import type { ConsoleHarness } from "./browser.js";

export interface TaskIn {
  key: string;
  command: string;
  dependsOn?: string[];
  mapOver?: string;
}

/** createDag, triggerDag and a DAG run's status through `h`'s API, as the administrator unless a token is given. */
export function dagApi(h: ConsoleHarness) {
  async function createDag(name: string, tasks: TaskIn[], token = h.admin, extra: Record<string, unknown> = {}): Promise<string> {
    const d = await gqlOk<{ createDag: { id: string } }>(
      h.app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      {
        input: {
          name,
          ...extra,
          tasks: tasks.map((t) => ({ key: t.key, dependsOn: t.dependsOn ?? [], ...(t.mapOver ? { mapOver: t.mapOver } : {}), spec: { kind: "COMMAND", command: t.command } })),
        },
      },
      token,
    );
    return d.createDag.id;
  }

  async function triggerDag(id: string, token = h.admin): Promise<string> {
    const d = await gqlOk<{ triggerDag: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id }, token);
    return d.triggerDag.id;
  }

  async function dagRunStatus(id: string, token = h.admin): Promise<string> {
    const d = await gqlOk<{ dagRun: { status: string } }>(h.app.url, `query($id: ID!) { dagRun(id: $id) { status } }`, { id }, token);
    return d.dagRun.status;
  }

  return { createDag, triggerDag, dagRunStatus };
}

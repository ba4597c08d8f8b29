/**
 * The generated typed client (codegen.ts → generated/client) against a running server, over HTTP
 * and a graphql-ws subscription, the way another team would use it.
 */
import { print, type DocumentNode } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateApiKeyDocument,
  CreateJobDocument,
  JobsDocument,
  LoginDocument,
  RunUpdatedDocument,
  RunsDocument,
  TriggerJobDocument,
  type RunUpdatedSubscription,
} from "../../generated/client/graphql.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { wsClient } from "../helpers/graphql.js";

let app: TestApp;

async function request<R, V>(doc: TypedDocumentNode<R, V>, variables: V, token?: string): Promise<R> {
  const res = await fetch(app.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: print(doc as DocumentNode), variables }),
  });
  const body = (await res.json()) as { data?: R; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.dispose();
});

describe("generated typed client", () => {
  it("logs in, creates and triggers a job, and follows it over a subscription", async () => {
    const { login } = await request(LoginDocument, { username: ADMIN.username, password: ADMIN.password });
    const token = login.token;
    expect(login.user.role).toBe("ADMIN");

    const { createJob } = await request(
      CreateJobDocument,
      { input: { name: "typed", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "echo typed" } } },
      token,
    );
    expect(createJob.schedule.kind).toBe("ONCE");

    const client = wsClient(app.wsUrl, token);
    const events: RunUpdatedSubscription["runUpdated"][] = [];
    const finished = new Promise<void>((resolve, reject) => {
      const stop = client.subscribe<RunUpdatedSubscription>(
        { query: print(RunUpdatedDocument as DocumentNode), variables: { jobId: createJob.id } },
        {
          next: (v) => {
            if (v.data) events.push(v.data.runUpdated);
            if (v.data?.runUpdated.status === "SUCCEEDED") {
              stop();
              resolve();
            }
          },
          error: reject,
          complete: () => resolve(),
        },
      );
    });
    await new Promise((r) => setTimeout(r, 200));
    const { triggerJob } = await request(TriggerJobDocument, { id: createJob.id }, token);
    await finished;
    await client.dispose();
    expect(events.map((e) => e.status)).toEqual(["QUEUED", "RUNNING", "SUCCEEDED"]);
    expect(events.every((e) => e.id === triggerJob.id)).toBe(true);
    expect(events.at(-1)?.outputTail).toBe("typed\n");

    const { runs } = await request(RunsDocument, { jobId: createJob.id, first: 10 }, token);
    expect(runs.edges.map((e) => e.node.id)).toEqual([triggerJob.id]);
  });

  it("works with an API key as the bearer credential, as docs/getting-started.md shows", async () => {
    const { login } = await request(LoginDocument, { username: ADMIN.username, password: ADMIN.password });
    const { createApiKey } = await request(CreateApiKeyDocument, { name: "partner-ci", scope: "READ_WRITE" }, login.token);
    expect(createApiKey.key).toMatch(/^kairos_/);
    const key = createApiKey.key;
    const { createJob } = await request(
      CreateJobDocument,
      { input: { name: "via-key", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } }, idempotencyKey: "via-key-1" },
      key,
    );
    const again = await request(
      CreateJobDocument,
      { input: { name: "via-key", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } }, idempotencyKey: "via-key-1" },
      key,
    );
    expect(again.createJob.id).toBe(createJob.id);
    const { jobs } = await request(JobsDocument, { filter: { name: "via-key" } }, key);
    expect(jobs.edges.map((e) => e.node.id)).toEqual([createJob.id]);
  });
});

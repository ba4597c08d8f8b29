/**
 * The GraphQL examples a reader copies from the README and the docs pages that hold them: every
 * `gql '…'` line's body is JSON, and every operation (in those lines and in the ```graphql blocks)
 * parses, validates against the schema and passes the default query limits and cost, so none is
 * answered GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED as written.
 */
import "reflect-metadata";
import { readFileSync } from "node:fs";
import { parse, validate, type GraphQLSchema } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { operationCost } from "../../src/api/cost.js";
import { QueryLimits } from "../../src/api/limits.js";
import { apiGuard } from "../../src/config/api.js";
import { buildKairosSchema } from "../../src/resolvers/index.js";

const FILES = [
  "README.md",
  "docs/getting-started.md",
  "docs/jobs.md",
  "docs/limits.md",
  "docs/dags.md",
  "docs/auth.md",
  "docs/artifacts.md",
  "docs/waiting.md",
  "docs/cluster-stats.md",
  "docs/audit.md",
];

interface Example {
  file: string;
  source: string;
  variables?: Record<string, unknown>;
}

/** Every operation of a file: each `gql '…'` line's query, and each operation of each ```graphql block. */
function examples(file: string): Example[] {
  const text = readFileSync(file, "utf8");
  const out: Example[] = [];
  for (const m of text.matchAll(/^gql '(.*)'/gm)) {
    const body = JSON.parse(m[1]!) as { query: string; variables?: Record<string, unknown> };
    out.push({ file, source: body.query, variables: body.variables });
  }
  for (const m of text.matchAll(/```graphql\n([\s\S]*?)```/g)) {
    const block = m[1]!;
    for (const def of parse(block).definitions) out.push({ file, source: block.slice(def.loc!.start, def.loc!.end) });
  }
  return out;
}

let schema: GraphQLSchema;
let limits: QueryLimits;
beforeAll(async () => {
  schema = await buildKairosSchema();
  limits = new QueryLimits(schema, apiGuard({}, false).query);
});

describe("the docs' GraphQL examples", () => {
  for (const file of FILES) {
    it(`${file}: every example parses, validates and is within the default limits and cost`, () => {
      const all = examples(file);
      expect(all.length).toBeGreaterThan(0);
      const q = limits.settings;
      for (const { source, variables } of all) {
        const doc = parse(source, limits.parseOptions);
        expect(validate(schema, doc, limits.validationRules).map(String), source).toEqual([]);
        // Placeholders ("…", "JOB_ID") are fine: only the shape is checked here, not the ids.
        expect(validate(schema, doc).map(String), source).toEqual([]);
        const subscription = doc.definitions.some((d) => d.kind === "OperationDefinition" && d.operation === "subscription");
        expect(operationCost(schema, doc, variables), source).toBeLessThanOrEqual(subscription ? q.maxSubscriptionCost : q.maxCost);
      }
    });
  }
});

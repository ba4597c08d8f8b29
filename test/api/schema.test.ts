/**
 * The committed schema.graphql and generated client must match the code: other teams build on
 * them. Regenerate with `npm run codegen`.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "@graphql-codegen/cli";
import { describe, expect, it } from "vitest";
import { buildKairosSchema } from "../../src/resolvers/index.js";
import codegenConfig from "../../codegen.js";
import { RunStatus as DomainRunStatus } from "../../src/domain/lifecycle.js";
import { ReportedRunStatus } from "../../src/domain/lifecycle.js";

describe("committed GraphQL artefacts", () => {
  it("schema.graphql is what the code emits", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kairos-schema-"));
    try {
      const path = join(dir, "schema.graphql");
      await buildKairosSchema({ emitSchemaFile: path });
      const fresh = await readFile(path, "utf8");
      const committed = readFileSync("schema.graphql", "utf8");
      expect(committed, "schema.graphql is stale: run `npm run codegen`").toBe(fresh);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("generated/client matches codegen over the committed schema and client/ operations", async () => {
    const outputs = await generate({ ...codegenConfig, silent: true, verbose: false }, false);
    expect(outputs.length).toBeGreaterThan(0);
    for (const out of outputs) {
      const committed = readFileSync(out.filename, "utf8");
      expect(committed, `${out.filename} is stale: run \`npm run codegen\``).toBe(out.content);
    }
  });

  it("GraphQL's RunStatus is the domain's RunStatus plus the reported-only CANCELLING, SCHEDULED and WITHDRAWN, in that order", () => {
    expect(Object.values(ReportedRunStatus)).toEqual([...Object.values(DomainRunStatus), "CANCELLING", "SCHEDULED", "WITHDRAWN"]);
  });
});

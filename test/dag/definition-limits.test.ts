/** Size limits of a DAG's task specs (src/dag/engine/definition.ts): a mapped task's spec is copied into each of its instances' runs. */
import { describe, expect, it } from "vitest";
import { checkTasks, MAX_MAPPED_SPEC_BYTES } from "../../src/dag/engine/definition.js";
import { ValidationError } from "../../src/domain/index.js";

const noNodes = async () => [];
const script = (bytes: number) => ({ kind: "SCRIPT" as const, interpreter: "sh", source: `echo ${"x".repeat(bytes)}` });

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error("expected a ValidationError");
}

describe("DAG task spec limits", () => {
  it("refuses a mapped task whose spec is over 64 KiB, saying why and what to do, and takes the same spec unmapped", async () => {
    const big = script(MAX_MAPPED_SPEC_BYTES);
    const e = await refusal(
      checkTasks(
        [
          { key: "root", spec: { kind: "COMMAND", command: "true" } },
          { key: "each", spec: big, dependsOn: ["root"], mapOver: "root" },
        ],
        noNodes,
      ),
    );
    expect(e.field).toBe("tasks[1].spec");
    expect(e.message).toMatch(/^task "each": spec: is \d+ bytes; a task with mapOver runs as up to 1000 instances, each a run holding a copy of its spec, so at most 65536 bytes \(64 KiB\): upload a large script as an artifact/);
    const plain = await checkTasks([{ key: "root", spec: { kind: "COMMAND", command: "true" } }, { key: "once", spec: big, dependsOn: ["root"] }], noNodes);
    expect(plain[1]!.spec.script?.source?.length).toBeGreaterThan(MAX_MAPPED_SPEC_BYTES);
    // Just under the limit, mapped: accepted.
    const fits = await checkTasks([{ key: "root", spec: { kind: "COMMAND", command: "true" } }, { key: "each", spec: script(60_000), dependsOn: ["root"], mapOver: "root" }], noNodes);
    expect(fits[1]!.mapOver).toBe("root");
  });
});

/** Validation of a DAG definition's graph (src/dag/plan/validate.ts): every message. */
import { describe, expect, it } from "vitest";
import { validateDag, type DagTaskDef } from "../../src/dag/index.js";

const t = (key: string, dependsOn: string[] = [], extra: Partial<DagTaskDef> = {}): DagTaskDef => ({ key, dependsOn, ...extra });

describe("validateDag", () => {
  it("accepts a diamond", () => {
    expect(validateDag({ tasks: [t("a"), t("b", ["a"]), t("c", ["a"]), t("d", ["b", "c"])] })).toEqual([]);
  });

  it("refuses an empty DAG", () => {
    expect(validateDag({ tasks: [] })).toEqual([{ path: "tasks", message: "a DAG needs at least one task" }]);
  });

  it("refuses more than 1,000 tasks, saying how many", () => {
    const tasks = Array.from({ length: 1001 }, (_, i) => t(`t${i}`));
    expect(validateDag({ tasks })).toEqual([{ path: "tasks", message: "a DAG has at most 1000 tasks; this one has 1001" }]);
    expect(validateDag({ tasks: tasks.slice(0, 1000) })).toEqual([]);
  });

  it("refuses more than 20,000 dependencies in all, saying how many (every advance walks them all)", () => {
    // 1,000 tasks, each on up to 21 predecessors: 20,769 edges.
    const wide = Array.from({ length: 1000 }, (_, i) => t(`t${i}`, Array.from({ length: Math.min(i, 21) }, (_, j) => `t${i - 1 - j}`)));
    expect(validateDag({ tasks: wide })).toEqual([{ path: "tasks", message: "a DAG has at most 20000 dependencies (dependsOn entries of all tasks together); this one has 20769" }]);
    const fits = Array.from({ length: 1000 }, (_, i) => t(`t${i}`, Array.from({ length: Math.min(i, 20) }, (_, j) => `t${i - 1 - j}`)));
    expect(validateDag({ tasks: fits })).toEqual([]);
  });

  it("refuses a parent named item or index of a mapped task (its KAIROS_INPUTS has those of its own)", () => {
    const problems = validateDag({ tasks: [t("item"), t("src"), t("m", ["src", "item"], { mapOver: "src" }), t("plain", ["item"])] });
    expect(problems).toEqual([
      {
        path: "tasks[2].dependsOn[1]",
        message:
          'task "m" maps over "src" and depends on "item": a mapped instance\'s KAIROS_INPUTS has "item" (its element) and "index" of its own, ' +
          'so a mapped task\'s parents cannot be named "item" or "index"; rename that task',
      },
    ]);
  });

  it.each(["", "1abc", "_a", "a b", "a.b", "a\"b", "é", "a".repeat(65), "a\nb"])("refuses the key %j", (key) => {
    const problems = validateDag({ tasks: [t(key)] });
    expect(problems).toEqual([
      {
        path: "tasks[0].key",
        message: `task key ${JSON.stringify(key)} is not allowed: a key is a letter followed by up to 63 letters, digits, '_' or '-'`,
      },
    ]);
  });

  it.each(["a", "Z", "extract_1", "load-2", "a".repeat(64)])("accepts the key %j", (key) => {
    expect(validateDag({ tasks: [t(key)] })).toEqual([]);
  });

  it("refuses a duplicate key, naming both places", () => {
    expect(validateDag({ tasks: [t("a"), t("b"), t("a")] })).toEqual([
      { path: "tasks[2].key", message: 'task key "a" is used twice (tasks[0] and tasks[2]); keys must be unique' },
    ]);
  });

  it("refuses an unknown dependsOn key, naming the task and the key", () => {
    expect(validateDag({ tasks: [t("a"), t("b", ["a", "nope"])] })).toEqual([
      { path: "tasks[1].dependsOn[1]", message: 'task "b" depends on "nope", which is not a task of this DAG' },
    ]);
  });

  it("refuses a self-dependency", () => {
    expect(validateDag({ tasks: [t("a", ["a"])] })).toEqual([
      { path: "tasks[0].dependsOn[0]", message: 'task "a" depends on itself; a task may depend only on other tasks' },
    ]);
  });

  it("refuses a parent listed twice", () => {
    expect(validateDag({ tasks: [t("a"), t("b", ["a", "a"])] })).toEqual([
      { path: "tasks[1].dependsOn[1]", message: 'task "b" lists "a" twice in dependsOn' },
    ]);
  });

  it("refuses an unknown trigger rule, listing the allowed ones", () => {
    const problems = validateDag({ tasks: [t("a", [], { trigger: "SOMETIMES" as never })] });
    expect(problems).toEqual([
      {
        path: "tasks[0].trigger",
        message: 'task "a" has trigger "SOMETIMES"; allowed: ALL_SUCCESS, ALL_DONE, ALL_FAILED, ONE_SUCCESS, ONE_FAILED, NONE_FAILED',
      },
    ]);
  });

  it("refuses a cycle, naming its path", () => {
    const problems = validateDag({
      tasks: [t("extract", ["transform"]), t("load", ["extract"]), t("transform", ["load"]), t("report", ["load"])],
    });
    expect(problems).toEqual([
      { path: "tasks[0].dependsOn", message: "dependsOn makes a cycle: extract → load → transform → extract; a DAG must have none" },
    ]);
  });

  it("reports each separate cycle once", () => {
    const problems = validateDag({ tasks: [t("a", ["b"]), t("b", ["a"]), t("c"), t("d", ["e"]), t("e", ["d", "c"])] });
    expect(problems.map((p) => p.message)).toEqual([
      "dependsOn makes a cycle: a → b → a; a DAG must have none",
      "dependsOn makes a cycle: d → e → d; a DAG must have none",
    ]);
  });

  it("refuses a mapOver that is not one of the task's parents", () => {
    expect(validateDag({ tasks: [t("a"), t("b"), t("c", ["a"], { mapOver: "b" })] })).toEqual([
      {
        path: "tasks[2].mapOver",
        message: 'task "c" maps over "b", which is not in its dependsOn; mapOver names one of the task\'s own parents',
      },
    ]);
    expect(validateDag({ tasks: [t("a"), t("c", ["a"], { mapOver: "a" })] })).toEqual([]);
  });

  it("reports every problem at once", () => {
    const problems = validateDag({ tasks: [t("a", ["a", "x"]), t("a"), t("9"), t("b", ["c"]), t("c", ["b"], { mapOver: "z" })] });
    expect(problems.map((p) => p.path)).toEqual([
      "tasks[0].dependsOn[0]",
      "tasks[0].dependsOn[1]",
      "tasks[1].key",
      "tasks[2].key",
      "tasks[4].mapOver",
      "tasks[3].dependsOn",
    ]);
  });

  it("shortens a very long key in messages", () => {
    const key = "k".repeat(500);
    const [problem] = validateDag({ tasks: [t(key)] });
    expect(problem!.message).toContain(`"${"k".repeat(80)}…"`);
    expect(problem!.message.length).toBeLessThan(200);
  });
});

/**
 * A run ending 127 or 126 names the program it could not start, from what the launcher or the
 * shell printed last (issue #30: `argv` and `command` end with the same error).
 */
import { describe, expect, it } from "vitest";
import { startFailure, startFailureError } from "../../src/executor/start-failure.js";

describe("the program a run could not start", () => {
  it.each([
    ['kairos: program not found: "prog" (not in the job\'s PATH)\n', "prog"],
    ["/bin/sh: 1: prog: not found\n", "prog"],
    ["kairos: 1: exec: prog: not found\n", "prog"],
    ["bash: line 1: prog: command not found\n", "prog"],
    ["/bin/bash: prog: command not found\n", "prog"],
    ["bash: ./bin/x: No such file or directory\n", "./bin/x"],
  ])("127 from %j names %s", (out, program) => {
    expect(startFailure(127, `some output first\n${out}`)).toEqual({ program, reason: null });
  });

  it.each([
    ['kairos: cannot run "/etc/passwd": Permission denied\n', "/etc/passwd", "Permission denied"],
    ["/bin/sh: 1: ./x: Permission denied\n", "./x", "Permission denied"],
    ["kairos: 1: exec: ./x: Exec format error\n", "./x", "Exec format error"],
    ["bash: line 1: ./x: cannot execute binary file: Exec format error\n", "./x", "cannot execute binary file: Exec format error"],
  ])("126 from %j names %s and why", (out, program, reason) => {
    expect(startFailure(126, out)).toEqual({ program, reason });
  });

  it("takes the last failure printed, and nothing from a run that said none", () => {
    expect(startFailure(127, "/bin/sh: 1: first: not found\n/bin/sh: 2: second: not found\n")?.program).toBe("second");
    expect(startFailure(127, "exiting 127 on purpose\n")).toBeNull();
    expect(startFailure(1, "/bin/sh: 1: prog: not found\n")).toBeNull();
  });

  it("words the run's error with the program, as the user knows it", () => {
    expect(startFailureError(127, "/bin/sh: 1: definitely-not-a-cmd: not found\n")).toBe('exit code 127: program not found: "definitely-not-a-cmd" (not in the job\'s PATH)');
    expect(startFailureError(127, "nothing said\n")).toBe("exit code 127: program or command not found");
    expect(startFailureError(126, 'kairos: cannot run "./.kairos-program": Exec format error\n')).toMatch(/^exit code 126: cannot run the job's binary: Exec format error \(not a program for this node's system/);
    expect(startFailureError(126, "nothing said\n")).toBe("exit code 126: program is not executable");
  });
});

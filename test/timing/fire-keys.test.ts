/**
 * Fire keys (src/domain/fire-keys.ts): each kind of key read back as what it is, and built nowhere
 * else — a key spelled by hand elsewhere would drift from the reader the ledger, the withdrawal and
 * the DAG engine rely on.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  dagAttemptOfFireKey,
  dstSkipKey,
  fireKey,
  instanceFireKey,
  isSlotFireKey,
  isWithdrawnFireKey,
  manualFireKey,
  withdrawnFireKey,
} from "../../src/domain/index.js";

const SRC = join(__dirname, "..", "..", "src");
const BUILDERS = new Set(["domain/fire-keys.ts", "domain/dag-documents.ts"]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("fire keys", () => {
  it("are read back as what they are", () => {
    const slot = fireKey("j1", 1_800_000_000_000);
    expect(slot).toBe("j1@1800000000000");
    expect(isSlotFireKey("j1", slot)).toBe(true);
    expect(isSlotFireKey("j1", manualFireKey("j1", "op7"))).toBe(false);
    expect(isSlotFireKey("j1", dstSkipKey("j1", 1_800_000_000_000))).toBe(false);
    expect(isSlotFireKey("j1", withdrawnFireKey(slot, "r9"))).toBe(false);
    expect(isSlotFireKey("j", slot)).toBe(false); // another job's prefix
    expect(isWithdrawnFireKey(withdrawnFireKey(slot, "r9"))).toBe(true);
    expect(isWithdrawnFireKey(slot)).toBe(false);
    expect(dagAttemptOfFireKey(instanceFireKey("dr1", "extract", null, 3))).toBe(3);
    expect(dagAttemptOfFireKey(instanceFireKey("dr1", "load", 12, 1))).toBe(1);
    expect(instanceFireKey("dr1", "load", 12, 1)).not.toBe(instanceFireKey("dr1", "load", null, 1));
    expect(dagAttemptOfFireKey(slot)).toBeNull();
  });

  it("are built only in domain/fire-keys.ts", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const rel = relative(SRC, file);
      if (BUILDERS.has(rel)) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          // `${a}@${b}` (a slot, manual or definition key), `${key}${WITHDRAWN_MARK}`, `#${attempt}` at a key's end.
          // A line of the same shape that builds something else says so: `// not a fire key: <what it is>`.
          if (/\/\/ not a fire key: \S/.test(line)) return;
          if (/\}@\$\{|\$\{WITHDRAWN_MARK\}|#\$\{attempt\}`/.test(line)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});

/**
 * A folder's `index.ts` is its public surface and nothing else (docs/architecture.md, "Public
 * surfaces"): it opens with a comment saying what the folder is for, and every statement re-exports
 * from a file of the folder (`export … from "./x.js"`), so what a folder does lives in files named
 * for it and the index only says what others may use.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** Every `index.ts` under src/, as paths from the repository's root. */
function indexFiles(dir = "src"): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? indexFiles(join(dir, e.name)) : e.name === "index.ts" ? [join(dir, e.name)] : [],
  );
}

/** The statements of `source` that are not a re-export, as their first line. */
function notReExports(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  return sf.statements.filter((s) => !(ts.isExportDeclaration(s) && s.moduleSpecifier)).map((s) => s.getText(sf).split("\n")[0]!);
}

describe("folders' index.ts files", () => {
  it("tells a re-export from code", () => {
    expect(notReExports("a.ts", `export * from "./a.js";\nexport { b, type C } from "./b.js";`)).toEqual([]);
    expect(notReExports("a.ts", `import { b } from "./b.js";\nexport { b };\nexport const c = 1;`)).toEqual([
      `import { b } from "./b.js";`,
      "export { b };",
      "export const c = 1;",
    ]);
  });

  const files = indexFiles();
  it("there are some", () => expect(files.length).toBeGreaterThan(10));

  for (const file of files) {
    it(`${file} only re-exports`, () => {
      expect(notReExports(file, readFileSync(file, "utf8"))).toEqual([]);
    });

    it(`${file} opens with what the folder is for`, () => {
      const opening = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(file, "utf8"))?.[1]?.replace(/^\s*\*\s?/gm, " ").trim() ?? "";
      expect(opening.split(/\s+/).length, `${file} should open with a /** … */ comment of a sentence or more`).toBeGreaterThanOrEqual(8);
    });
  }
});

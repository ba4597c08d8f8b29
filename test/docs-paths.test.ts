/**
 * The map must match the territory: every repository path that README.md and docs/*.md name (in
 * backticks or as a link) exists, every link to a heading of a page finds that heading, and
 * nothing in the repository cites a file outside it (the original design notes, say).
 *
 * A name counts as a path when it looks like one: segments of letters, digits, `.`, `_`, `-`
 * separated by `/` (a trailing `/` names a folder), or a single name ending in a known extension.
 * It exists when some file or folder of the repository ends with it at a `/` boundary, so
 * `store/runs/claims.ts` (relative to `src/`, as the pages write it) finds `src/store/runs/claims.ts`
 * and a bare `shards.ts` in a folder's table row finds `src/scheduler/shards.ts`. Links are
 * resolved from the page's own folder, exactly as a reader's browser does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = process.cwd();
const SKIP_DIRS = new Set(["node_modules", ".git", "dist", ".kairos"]);
const EXTENSIONS = ["ts", "tsx", "js", "mjs", "cjs", "json", "md", "yml", "yaml", "graphql", "c", "h", "png", "sh", "css", "html", "lua"];
const EXT = new RegExp(`\\.(${EXTENSIONS.join("|")})$`);
/** Segments of a repository path: no spaces, placeholders (`<id>`), globs, URLs or key templates. */
const PATH = /^(\.{0,2}\/)?([A-Za-z0-9_.-]+\/)*[A-Za-z0-9_.-]+\/?$/;

/** Every file and folder of the repository, as paths from its root ("src/store/", "README.md"). */
function repositoryPaths(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (SKIP_DIRS.has(entry.name)) continue;
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        out.push(`${path}/`);
        walk(path);
      } else out.push(path);
    }
  };
  walk("");
  return out;
}

const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The page's text without fenced code blocks (commands, output and diagrams are not references). */
function prose(page: string): string {
  return readFileSync(join(ROOT, page), "utf8").replace(/^```[\s\S]*?^```/gm, "");
}

/** Paths made by a build or at run time, not kept in the repository. */
const GENERATED = ["dist/", ".vite/", ".kairos", "./.kairos"];

/**
 * A name in backticks that looks like a repository path (see the module comment). With a `/`,
 * its first folder must be the name of one of the repository's folders, so `application/json`,
 * `Asia/Kolkata` or `N/duration` are not taken for paths while `src/made-up/x` is.
 */
function looksLikePath(name: string, folders: ReadonlySet<string>): boolean {
  if (!PATH.test(name) || name.startsWith("/") || /^\d/.test(name)) return false; // "1200/PT1M": a figure
  if (name.split("/").includes("..") || GENERATED.some((g) => name.startsWith(g))) return false;
  if (name.endsWith("/") || EXT.test(name)) return true;
  const segments = name.replace(/^\.\//, "").split("/");
  return segments.length > 1 && folders.has(segments[0]!);
}

/** Whether some repository file or folder ends with `name` at a `/` boundary (a name ending in `/` only a folder). */
function existsInRepository(name: string, paths: readonly string[]): boolean {
  const clean = name.replace(/^\.\//, "");
  const wanted = clean.endsWith("/") ? [clean] : [clean, `${clean}/`];
  return paths.some((p) => wanted.some((w) => p === w || p.endsWith(`/${w}`)));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a page offers: one per heading, a repeated one with -1, -2 … as GitHub makes them. */
function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(page).matchAll(/^#{1,6} (.*)$/gm)) {
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The paths a page names in backticks, and its links' targets, each with its line. */
function references(page: string, folders: ReadonlySet<string>): { code: Array<[string, number]>; links: Array<[string, number]> } {
  const code: Array<[string, number]> = [];
  const links: Array<[string, number]> = [];
  prose(page)
    .split("\n")
    .forEach((line, i) => {
      for (const m of line.matchAll(/`([^`\n]+)`/g)) if (looksLikePath(m[1]!, folders)) code.push([m[1]!, i + 1]);
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) if (!/^[a-z]+:/i.test(m[1]!)) links.push([m[1]!, i + 1]);
    });
  return { code, links };
}

describe("the paths the README and docs name", () => {
  const paths = repositoryPaths();
  const folders = new Set(paths.filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1).split("/").pop()!));

  it("tells a path from other names, and finds a path however the page abbreviates it", () => {
    const yes = ["src/store/runs/claims.ts", "store/runs/claims.ts", "domain/", "shards.ts", ".ci/run", "schema.graphql", "src/made-up/x", "hooks/"];
    const no = ["/bin/sh", "application/json", "Asia/Kolkata", "kairos:logs:<runId>", "1200/PT1M", "P:tw:{s}", "test/chaos/*.ts", "KAIROS_LEASE", "v1.2", "dist/main.js", "../../jwt-secret"];
    for (const p of yes) expect(looksLikePath(p, folders), p).toBe(true);
    for (const p of no) expect(looksLikePath(p, folders), p).toBe(false);
    expect(existsInRepository("store/runs/claims.ts", paths)).toBe(true);
    expect(existsInRepository("shards.ts", paths)).toBe(true);
    expect(existsInRepository("domain/", paths)).toBe(true);
    expect(existsInRepository("packages/mongo-emulator", paths)).toBe(true);
    // Made up: a file that is not there, and a real name under the wrong folder.
    expect(existsInRepository("src/store/runs/made-up.ts", paths)).toBe(false);
    expect(existsInRepository("scheduler/claims.ts", paths)).toBe(false);
    expect(existsInRepository("hooks/", paths)).toBe(false);
  });

  for (const page of PAGES) {
    it(`${page}: every path in backticks exists`, () => {
      const missing = references(page, folders).code.filter(([name]) => !existsInRepository(name, paths));
      expect(missing.map(([name, line]) => `${page}:${line}: \`${name}\``)).toEqual([]);
    });

    it(`${page}: every link finds its file, and its heading`, () => {
      const broken: string[] = [];
      for (const [target, line] of references(page, folders).links) {
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const path = file ? normalize(join(dirname(page), decodeURIComponent(file))) : page;
        if (!existsSync(join(ROOT, path))) {
          broken.push(`${page}:${line}: ${target} (no ${path})`);
          continue;
        }
        if (anchor && path.endsWith(".md") && statSync(join(ROOT, path)).isFile() && !anchorsOf(path).has(anchor)) {
          broken.push(`${page}:${line}: ${target} (no heading "${anchor}" in ${relative(ROOT, join(ROOT, path))})`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});

describe("the repository cites nothing outside it", () => {
  it("no source, test or page names the design notes kept beside the repository", () => {
    const outside = /\b(DESIGN|STACK|STYLE)\.md\b|\.\.\/shared\//;
    const cited = repositoryPaths()
      .filter((p) => /\.(ts|tsx|md|c|mjs|cjs|yml|json)$/.test(p) && !p.endsWith("package-lock.json"))
      .filter((p) => p !== "test/docs-paths.test.ts")
      .filter((p) => outside.test(readFileSync(join(ROOT, p), "utf8")));
    expect(cited).toEqual([]);
  });
});

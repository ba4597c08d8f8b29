/**
 * The import rules of src/ (docs/architecture.md). `npm test` runs `npm run lint:imports`, which
 * fails on a new cycle, an import against the layers, or a deep import into another folder.
 *
 * Layers, bottom first: a folder may import its own files and the folders of lower layers only.
 */
const LAYERS = [
  ["domain"],
  ["support"],
  ["timing"],
  ["store", "shared-state", "blobs"],
  ["auth"],
  ["core"],
  ["dag"],
  ["scheduler", "executor"],
  ["schema"],
  ["resolvers"],
  ["api"],
  ["config"],
  ["app"],
];
const layerOf = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, i])));
const folders = [...layerOf.keys()];

/** For each folder: every folder it may not import (same layer or above), as one rule. */
const layerRules = folders.map((folder) => {
  const mine = layerOf.get(folder);
  const banned = folders.filter((f) => f !== folder && layerOf.get(f) >= mine);
  return {
    name: `layer-${folder}`,
    comment: `src/${folder}/ may import only ${folders.filter((f) => layerOf.get(f) < mine).join(", ") || "nothing of the product"} (docs/architecture.md)`,
    severity: "error",
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${[...banned.map((f) => `${f}/`), "[^/]+\\.ts$"].join("|")})` },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle, between folders or between files (docs/architecture.md).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-deep-import",
      comment: "Another folder is used through its index.ts, its public surface.",
      severity: "error",
      from: { path: "^src/([^/]+)/" },
      to: { path: "^src/[^/]+/", pathNot: ["^src/$1/", "^src/[^/]+/index\\.ts$"] },
    },
    {
      name: "top-level-through-index",
      comment: "app.ts and main.ts also use folders through their index.ts.",
      severity: "error",
      from: { path: "^src/[^/]+\\.ts$" },
      to: { path: "^src/[^/]+/", pathNot: ["^src/[^/]+/index\\.ts$"] },
    },
    {
      name: "domain-imports-nothing",
      comment: "src/domain/ imports no package either: it is plain data and rules.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "core"] },
    },
    {
      name: "no-dev-deps-in-production",
      comment: "Production code does not import devDependencies (the MongoDB emulator and s3rver are loaded by `kairos dev` only, dynamically).",
      severity: "error",
      from: { path: "^src/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["dynamic-import", "type-only"] },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    exclude: { path: "^(dist|packages/[^/]+/dist)/" },
  },
};

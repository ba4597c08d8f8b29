/**
 * The TypeScript steps of scripts/build.mjs: each project's config, the inputs whose change makes it
 * build again, and the .tsbuildinfo whose time stands for its output (scripts/stale.mjs).
 * test/setup/build-steps.test.ts checks that the inputs cover every file each project compiles.
 */
import { INSTALLED } from "./stale.mjs";

/** The TypeScript projects: their config, the files they read, and the tsbuildinfo standing for their output. */
export const TSC_STEPS = [
  {
    name: "the MongoDB emulator package",
    project: "packages/mongo-emulator/tsconfig.build.json",
    output: "packages/mongo-emulator/dist/.tsbuildinfo",
    also: ["packages/mongo-emulator/dist/index.js"],
    inputs: ["packages/mongo-emulator/src", "packages/mongo-emulator/tsconfig.build.json", "packages/mongo-emulator/package.json", "tsconfig.json", ...INSTALLED],
  },
  {
    name: "the server",
    project: "tsconfig.build.json",
    output: "dist/.tsbuildinfo",
    also: ["dist/main.js"],
    // It compiles against the emulator's built declarations (tsconfig.build.json).
    inputs: ["src", "packages/mongo-emulator/dist", "tsconfig.json", "tsconfig.build.json", ...INSTALLED],
    exclude: ["src/cli", "src/executor/sandbox/launcher.c"],
  },
  {
    name: "the command line",
    project: "src/cli/tsconfig.build.json",
    output: "dist/cli/.tsbuildinfo",
    also: ["dist/cli/src/cli/index.js"],
    // src/cli imports other folders of src/ and the generated client: any of them may change it.
    inputs: ["src", "generated/client", "tsconfig.json", "tsconfig.build.json", ...INSTALLED],
    exclude: ["src/executor/sandbox/launcher.c"],
  },
];

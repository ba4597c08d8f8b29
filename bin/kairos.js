#!/usr/bin/env node
// Entry point of the `kairos` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci`/`npm install` through the `prepare` script and by `npm start`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The AWS SDK warns at every start on Node 20 that its releases after January 2027 will need Node 22.
// The SDK's version is pinned by package-lock.json, so the warning says nothing
// about this install: it stays off unless the environment asks for it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));
if (!existsSync(main)) {
  process.stderr.write("kairos: dist/ is missing; run `npm run build` first (npm ci does it for you)\n");
  process.exit(1);
}
await import(main);

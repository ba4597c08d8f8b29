#!/usr/bin/env node
// Entry point of the `kairos` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci`/`npm install` through the `prepare` script and by `npm start`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));
if (!existsSync(main)) {
  process.stderr.write("kairos: dist/ is missing; run `npm run build` first (npm ci does it for you)\n");
  process.exit(1);
}
await import(main);

/**
 * The console's production build: `npm run build` runs `vite build --config console/vite.config.ts`
 * and the API role serves the result (dist/console) at `/`. `npm run console:dev` serves it with
 * hot reload, proxying /graphql (HTTP and WebSocket) to a running `kairos dev` on port 4000.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles anywhere: the CSP (src/api/console.ts) allows only files from 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    manifest: true, // dist/console/.vite/manifest.json: the import graph bench/console.ts sizes the first load from
    sourcemap: true,
    reportCompressedSize: false,
  },
  server: {
    proxy: { "/graphql": { target: "http://localhost:4000", ws: true } },
  },
});

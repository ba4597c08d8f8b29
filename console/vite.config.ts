/**
 * The console's production build: `npm run build` runs `vite build --config console/vite.config.ts`
 * and the API role serves the result (dist/console) at `/`. `npm run console:dev` serves it with
 * hot reload, proxying /graphql (HTTP and WebSocket) to a running `kairos dev` on port 4000.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { FIRST_QUERY_ENTRY, firstQuery } from "./vite-first-query.ts";
import { precompress } from "./vite-precompress.ts";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  publicDir: false,
  plugins: [firstQuery(), precompress()],
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles anywhere: the CSP (src/api/console.ts) allows only files from 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    manifest: true, // dist/console/.vite/manifest.json: the import graph bench/console.ts sizes the first load from
    sourcemap: true,
    reportCompressedSize: false,
    // The app (index.html's entry) and the first-request script (src/boot/first-query.ts), which
    // index.html loads ahead of it.
    rollupOptions: { input: { index: fileURLToPath(new URL("index.html", import.meta.url)), "first-query": FIRST_QUERY_ENTRY } },
  },
  server: {
    proxy: { "/graphql": { target: "http://localhost:4000", ws: true } },
  },
});

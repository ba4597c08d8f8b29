/**
 * The build's side of the console's first request (src/boot/first-query.ts): that script is its own
 * entry, loaded by index.html as an `async` module script ahead of the app's (with modulepreloads
 * for the small modules it shares with the app), and the runs search it sends is the generated
 * ConsoleRunsSearch document as urql sends it (with `__typename`), printed here at build time.
 */
import { fileURLToPath } from "node:url";
import { formatDocument } from "@urql/core";
import { print } from "graphql";
import type { HtmlTagDescriptor, Plugin } from "vite";
import { ConsoleRunsSearchDocument } from "../generated/client/graphql.ts";

export const FIRST_QUERY_ENTRY = fileURLToPath(new URL("./src/boot/first-query.ts", import.meta.url));

export function firstQuery(): Plugin {
  return {
    name: "kairos-first-query",
    config: () => ({ define: { __KAIROS_RUNS_SEARCH__: JSON.stringify(print(formatDocument(ConsoleRunsSearchDocument))) } }),
    transformIndexHtml: {
      order: "post",
      handler(html, ctx) {
        // `vite` (development): the source module, served as is.
        if (!ctx.bundle) return [{ tag: "script", attrs: { type: "module", async: true, src: "/src/boot/first-query.ts" }, injectTo: "head" }];
        const chunk = Object.values(ctx.bundle).find((c) => c.type === "chunk" && c.isEntry && c.facadeModuleId === FIRST_QUERY_ENTRY);
        if (!chunk || chunk.type !== "chunk") throw new Error("the console's build has no first-query entry (console/vite.config.ts rollupOptions.input)");
        const tags: HtmlTagDescriptor[] = [{ tag: "script", attrs: { type: "module", async: true, crossorigin: true, src: `/${chunk.fileName}` }, injectTo: "head-prepend" }];
        let page = html;
        for (const file of chunk.imports) {
          tags.push({ tag: "link", attrs: { rel: "modulepreload", crossorigin: true, href: `/${file}` }, injectTo: "head-prepend" });
          // The app's own preload of the same module (Vite's), now redundant.
          page = page.replace(new RegExp(`\\s*<link rel="modulepreload" crossorigin href="/${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}">`), "");
        }
        return { html: page, tags };
      },
    },
  };
}

/**
 * Writes a brotli (`.br`) and a gzip (`.gz`) copy beside each JS and CSS file of the console's
 * build, compressed once at build time at the highest levels; the API role serves them to browsers
 * that accept them (src/api/console-assets.ts), so no request pays for compression. The copies are
 * made from the files as written (after every rewrite of the chunks and their source-map comment).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Plugin } from "vite";

/** Smaller files gain too little to be worth a second copy. */
const MIN_BYTES = 1024;

export function precompress(): Plugin {
  return {
    name: "kairos-precompress",
    apply: "build",
    writeBundle(options, bundle) {
      if (!options.dir) throw new Error("kairos-precompress needs the build's output directory");
      for (const name of Object.keys(bundle)) {
        if (!/\.(js|css)$/.test(name)) continue;
        const path = join(options.dir, name);
        const source = readFileSync(path);
        if (source.length < MIN_BYTES) continue;
        writeFileSync(`${path}.br`, brotliCompressSync(source, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: source.length } }));
        writeFileSync(`${path}.gz`, gzipSync(source, { level: 9 }));
      }
    },
  };
}

/**
 * The console's compressed assets: the build writes a brotli and a gzip copy beside each JS and CSS
 * file (console/vite-precompress.ts). A request that accepts one of them is answered from that copy
 * (`Content-Encoding: br` or `gzip`), so the first load sends ~100 KiB of JavaScript instead of
 * ~400 KiB and no request spends CPU compressing. Everything else — other files, a client that
 * accepts neither, a name that is not a plain file name — goes on to express.static unchanged.
 */
import { existsSync } from "node:fs";
import type { RequestHandler } from "express";

/** A hashed asset's name: no directory, no escapes (anything else is left to express.static's checks). */
const ASSET = /^\/[\w.-]+\.(js|css)$/;
/** In the order they are preferred. */
const ENCODINGS = [
  ["br", ".br"],
  ["gzip", ".gz"],
] as const;

/** Mounted at `/assets`, before express.static over `assetsDir` (which must end with `/`). */
export function precompressedAssets(assetsDir: string): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || !ASSET.test(req.path)) return next();
    const ext = req.path.slice(req.path.lastIndexOf("."));
    // Caches keep one answer per encoding, compressed or not.
    res.vary("Accept-Encoding");
    // Brotli first whenever it is accepted at all: browsers list it after gzip at the same weight.
    const pick = ENCODINGS.find(([name, suffix]) => req.acceptsEncodings(name) === name && existsSync(`${assetsDir}${req.path.slice(1)}${suffix}`));
    if (!pick) return next();
    // express.static serves the copy (its ETag, ranges, caching headers); the type stays the original's.
    res.type(ext);
    res.setHeader("Content-Encoding", pick[0]);
    const q = req.url.indexOf("?");
    req.url = q < 0 ? `${req.url}${pick[1]}` : `${req.url.slice(0, q)}${pick[1]}${req.url.slice(q)}`;
    next();
  };
}

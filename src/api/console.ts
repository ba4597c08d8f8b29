/**
 * The web console (console/, built by Vite into dist/console) on the API's port: `/` and every
 * address of the single-page app answer index.html; `/assets/*` are content-hashed files, cached
 * for a year. Every answer carries a Content-Security-Policy that allows scripts, styles and
 * connections from this origin only (no inline script or style, no eval), and refuses framing.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import express, { type Express, type RequestHandler } from "express";
import helmet from "helmet";
import { precompressedAssets } from "./console-assets.js";

/** Where `npm run build` puts the console: `<project>/dist/console`, from src/api or dist/api alike. */
export const CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));

/**
 * The build to serve: KAIROS_CONSOLE_DIR when set (another build of the console, e.g. the private
 * copy bench/console.ts serves so a rebuild of dist/console during the run cannot change it), else
 * {@link CONSOLE_DIR}.
 */
export function consoleDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.KAIROS_CONSOLE_DIR;
  if (!dir) return CONSOLE_DIR;
  return dir.endsWith("/") ? dir : `${dir}/`;
}

/** The paths the API itself answers; the console's fallback never shadows them. */
const API_PATHS = /^\/(graphql|healthz|readyz|metrics)(\/|$)/;

export function consoleSecurityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        fontSrc: ["'self'"],
        // 'self' covers ws:/wss: to this host in CSP 3 browsers; graphql-ws connects to /graphql here.
        connectSrc: ["'self'"],
        manifestSrc: ["'self'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: "no-referrer" },
    crossOriginEmbedderPolicy: false,
    strictTransportSecurity: false, // TLS ends at the user's proxy, which sets HSTS when it serves HTTPS
  });
}

/**
 * Mounts the console. Without a build (a checkout where `npm run build` has not run) `/` says so
 * instead of a 404 that would leave a new user guessing.
 */
export function mountConsole(app: Express, dir = consoleDir()): void {
  const index = `${dir}index.html`;
  const headers = consoleSecurityHeaders();
  app.use("/assets", headers, precompressedAssets(`${dir}assets/`), express.static(`${dir}assets`, { immutable: true, maxAge: "365d", index: false, fallthrough: false }));
  app.get(/.*/, (req, res, next) => {
    if (API_PATHS.test(req.path)) return next();
    // Only pages: a request for a file (with an extension) that is not there is a plain 404. Below
    // `/`, the app answers only a client that prefers HTML (a browser's navigation); an API client
    // (no Accept, */*, JSON) asking for an unknown path gets the API's 404 envelope.
    if (/\.[a-z0-9]+$/i.test(req.path)) return next();
    if (req.path !== "/" && req.accepts(["json", "html"]) !== "html") return next();
    headers(req, res, () => {
      res.setHeader("Cache-Control", "no-cache");
      if (!existsSync(index)) {
        res.status(503).type("text/plain").send("The Kairos console is not built: run `npm run build` (the GraphQL API is at /graphql).\n");
        return;
      }
      res.sendFile(index);
    });
  });
}

/**
 * The console's assets compressed at build time (console/vite-precompress.ts) and served by
 * encoding (src/api/console-assets.ts): brotli or gzip when the client accepts it, the plain file
 * otherwise, always with the file's own type, `Vary: Accept-Encoding` and immutable caching.
 */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { consoleDir } from "../../src/api/console.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp();

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw GET (no client-side decompression), with the Accept-Encoding given. */
function get(path: string, acceptEncoding?: string): Promise<Answer> {
  const url = new URL(path, t.app.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** index.html's scripts and stylesheet, as the browser loads them first. */
function firstLoadFiles(): string[] {
  const html = readFileSync(join(consoleDir(), "index.html"), "utf8");
  return [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
}

describe("console: assets compressed at build time", () => {
  it("every JS and CSS file of the first load goes as brotli to a browser, gzip to a gzip-only client, plain to the rest", async () => {
    const files = firstLoadFiles();
    expect(files.some((f) => /\/index-[\w-]+\.js$/.test(f)), files.join()).toBe(true);
    for (const file of files) {
      const plain = readFileSync(join(consoleDir(), file));
      const type = file.endsWith(".js") ? /javascript/ : /text\/css/;

      const br = await get(`/${file}`, "gzip, deflate, br, zstd");
      expect(br.status, file).toBe(200);
      expect(br.headers["content-encoding"], file).toBe("br");
      expect(brotliDecompressSync(br.body).equals(plain), file).toBe(true);

      const gz = await get(`/${file}`, "gzip");
      expect(gz.headers["content-encoding"], file).toBe("gzip");
      expect(gunzipSync(gz.body).equals(plain), file).toBe(true);

      const none = await get(`/${file}`);
      expect(none.headers["content-encoding"], file).toBeUndefined();
      expect(none.body.equals(plain), file).toBe(true);

      for (const a of [br, gz, none]) {
        expect(a.headers["content-type"], file).toMatch(type);
        expect(a.headers["vary"], file).toMatch(/accept-encoding/i);
        expect(a.headers["cache-control"], file).toMatch(/immutable/);
        expect(a.headers["x-content-type-options"], file).toBe("nosniff");
      }
      if (plain.length > 20_000) expect(br.body.length, file).toBeLessThan(plain.length / 2);
    }
  });

  it("q-values are honoured: br refused means gzip; both refused means the plain file", async () => {
    const [file] = firstLoadFiles().filter((f) => f.endsWith(".js"));
    expect((await get(`/${file}`, "br;q=0, gzip")).headers["content-encoding"]).toBe("gzip");
    expect((await get(`/${file}`, "br;q=0, gzip;q=0, identity")).headers["content-encoding"]).toBeUndefined();
  });

  it("a compressed copy is never reachable by its own name's tricks or outside /assets", async () => {
    const [file] = firstLoadFiles().filter((f) => f.endsWith(".js"));
    for (const path of ["/assets/nope-AAAAAAAA.js", "/assets/..%2f..%2fpackage.json", "/assets/%2e%2e/index.html", `/${file}/x`, "/assets/.vite/manifest.json"]) {
      const a = await get(path, "br, gzip");
      expect([403, 404], path).toContain(a.status);
      expect(a.headers["content-encoding"], path).toBeUndefined();
    }
  });
});

/**
 * The embedded S3 of `kairos dev` (and the tests): s3rver, an S3-compatible server on a local
 * directory, started in-process on loopback, so dev runs the same `@aws-sdk/client-s3` code path
 * as production with nothing to install. s3rver is a devDependency: imported on demand, here
 * only, like the MongoDB emulator (dev-emulator.ts); production images do not carry it.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type * as S3rverModule from "s3rver";
import type { BlobStoreSettings } from "../blobs/index.js";
import { ConfigError } from "../domain/index.js";
import { checkSigV4, errorXml } from "./dev-s3-auth.js";

export const S3RVER_PACKAGE = "s3rver";

/** s3rver's built-in account id (the only one it knows); the secret is ours, checked by dev-s3-auth.ts. */
const S3RVER_ACCESS_KEY_ID = "S3RVER";

export interface EmbeddedS3 {
  /** Settings for `createS3BlobStore` that reach it. */
  settings: BlobStoreSettings;
  stop(): Promise<void>;
}

export async function loadS3rver(load: () => Promise<typeof S3rverModule> = () => import("s3rver")): Promise<typeof S3rverModule.default> {
  try {
    const mod = await load();
    // CommonJS: the class is `default` (ESM interop) or the module itself.
    return ((mod as { default?: unknown }).default ?? mod) as typeof S3rverModule.default;
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    const missing = (err.code === "ERR_MODULE_NOT_FOUND" || err.code === "MODULE_NOT_FOUND") && String(err.message).includes(`'${S3RVER_PACKAGE}'`);
    if (!missing) throw e;
    throw new ConfigError(
      `kairos dev without S3_BUCKET needs the embedded S3 server (${S3RVER_PACKAGE}), a development package that is not installed here ` +
        "(production images leave it out). Set S3_BUCKET (and S3_ENDPOINT, credentials) to use an S3 service, or run kairos dev from a checkout after `npm ci`.",
      { cause: e },
    );
  }
}

/**
 * Starts s3rver on 127.0.0.1 (port 0: a free one) over `directory`, with `bucket` created, behind
 * a SigV4 check with a secret made for this start (dev-s3-auth.ts): only clients given the
 * settings (the product itself, and whoever holds a presigned URL) reach it.
 */
export async function startEmbeddedS3(opts: { directory: string; bucket: string; port?: number }): Promise<EmbeddedS3> {
  const S3rver = await loadS3rver();
  const s3rver = new S3rver({ silent: true, directory: opts.directory, vhostBuckets: false, configureBuckets: [{ name: opts.bucket }] });
  await s3rver.configureBuckets();
  const keys = { accessKeyId: S3RVER_ACCESS_KEY_ID, secretAccessKey: randomBytes(24).toString("hex") };
  const handle = s3rver.callback();
  const server = createServer((req, res) => {
    const refused = checkSigV4(req, keys);
    if (!refused) return handle(req, res);
    res.writeHead(refused.status, { "content-type": "application/xml" });
    res.end(errorXml(refused));
    req.resume();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    settings: { endpoint, publicEndpoint: null, bucket: opts.bucket, region: "us-east-1", credentials: keys, forcePathStyle: true },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

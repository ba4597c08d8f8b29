/** The embedded S3 (s3rver, as `kairos dev` runs it) for tests: on a free loopback port, a private directory. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startEmbeddedS3 } from "../../src/app/dev-s3.js";
import { createS3BlobStore, type BlobStore, type BlobStoreSettings } from "../../src/blobs/index.js";

export interface TestS3 {
  settings: BlobStoreSettings;
  blobs: BlobStore;
  stop(): Promise<void>;
}

export async function startTestS3(bucket = "kairos-test"): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), "kairos-s3-"));
  const s3 = await startEmbeddedS3({ directory, bucket });
  const blobs = createS3BlobStore(s3.settings);
  return {
    settings: s3.settings,
    blobs,
    stop: async () => {
      blobs.close();
      await s3.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** One embedded S3 for the file: started before its tests, stopped after them. */
export function useTestS3(bucket?: string): { readonly s3: TestS3 } {
  let s3: TestS3 | undefined;
  beforeAll(async () => {
    s3 = await startTestS3(bucket);
  });
  afterAll(async () => {
    await s3?.stop();
  });
  return {
    get s3() {
      if (!s3) throw new Error("useTestS3: used before beforeAll ran");
      return s3;
    },
  };
}

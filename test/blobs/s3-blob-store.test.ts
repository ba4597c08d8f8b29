/** The S3 blob store against the embedded S3 server (s3rver) with the SDK version the product pins. */
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createS3BlobStore } from "../../src/blobs/index.js";
import { useTestS3 } from "../helpers/s3.js";

const read = async (s: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
};
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("S3 blob store (embedded s3rver)", () => {
  const t = useTestS3();

  it("puts a buffer and a stream and reads them back byte for byte, with head, list and delete", async () => {
    const { blobs } = t.s3;
    const big = randomBytes(300_000);
    await blobs.put("t/a.bin", big, { contentType: "application/octet-stream" });
    await blobs.put("t/b.txt.gz", Readable.from([Buffer.from("streamed-"), Buffer.from("body")]), { contentType: "text/plain", contentEncoding: "gzip" });
    expect((await read((await blobs.get("t/a.bin"))!)).equals(big)).toBe(true);
    expect((await read((await blobs.get("t/b.txt.gz"))!)).toString()).toBe("streamed-body");
    expect(await blobs.head("t/a.bin")).toMatchObject({ size: 300_000, contentType: "application/octet-stream" });
    const listed = [];
    for await (const o of blobs.list("t/")) listed.push(o.key);
    expect(listed.sort()).toEqual(["t/a.bin", "t/b.txt.gz"]);
    await blobs.deleteMany(["t/a.bin", "t/b.txt.gz", "t/never-there"]);
    expect(await blobs.head("t/a.bin")).toBeNull();
    expect(await blobs.get("t/b.txt.gz")).toBeNull();
    await blobs.delete("t/never-there");
  });

  it("a presigned PUT accepts exactly the declared size, and a presigned GET reads it back", async () => {
    const { blobs } = t.s3;
    const bytes = randomBytes(5_000);
    const put = await blobs.presignPut("up/one", { size: bytes.length, sha256: sha256(bytes), expiresInSeconds: 60 });
    expect(new URL(put.url).searchParams.get("X-Amz-SignedHeaders")!.split(";")).toContain("content-length");
    // Content-Length is part of the signature: another size is refused before anything is stored.
    const shorter = await fetch(put.url, { method: "PUT", body: bytes.subarray(0, 4_000), headers: put.headers });
    expect(shorter.status).toBe(403);
    expect(await shorter.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    expect(await blobs.head("up/one")).toBeNull();
    const ok = await fetch(put.url, { method: "PUT", body: bytes, headers: put.headers });
    expect(ok.status).toBe(200);
    expect(await blobs.head("up/one")).toMatchObject({ size: 5_000 });
    const get = await blobs.presignGet("up/one", { expiresInSeconds: 60, fileName: "one.bin" });
    const res = await fetch(get);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    // A presigned URL is for its key only.
    const other = await fetch(get.replace("/up/one?", "/up/two?"));
    expect(other.status).toBe(403);
  });

  it("refuses unsigned requests, a wrong secret and an expired URL, as S3 does", async () => {
    const { blobs, settings } = t.s3;
    await blobs.put("private/x", "secret bytes", { contentType: "text/plain" });
    const unsigned = await fetch(`${settings.endpoint}/${settings.bucket}/private/x`);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.text()).not.toContain("secret bytes");
    const forged = createS3BlobStore({ ...settings, credentials: { accessKeyId: settings.credentials!.accessKeyId, secretAccessKey: "not-the-secret" } });
    const put = await forged.presignPut("private/forged", { size: 3, sha256: sha256(Buffer.from("abc")), expiresInSeconds: 60 });
    expect((await fetch(put.url, { method: "PUT", body: "abc" })).status).toBe(403);
    await expect(forged.head("private/x")).rejects.toThrow();
    forged.close();
    expect(await blobs.head("private/forged")).toBeNull();
    const soon = await blobs.presignGet("private/x", { expiresInSeconds: 1 });
    await new Promise((r) => setTimeout(r, 2_100));
    const late = await fetch(soon);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("Request has expired");
  });

  it("ensureBucket creates a missing bucket and is idempotent", async () => {
    const other = createS3BlobStore({ ...t.s3.settings, bucket: "another-bucket" });
    await other.ensureBucket();
    await other.ensureBucket();
    await other.put("x", "y", { contentType: "text/plain" });
    expect(await other.head("x")).toMatchObject({ size: 1 });
    other.close();
  });
});

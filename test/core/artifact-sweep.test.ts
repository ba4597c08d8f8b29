/** The artifact sweep on the emulated MongoDB and the embedded S3, with a hand-driven clock. */
import { describe, expect, it } from "vitest";
import { ArtifactSweeper } from "../../src/core/artifacts/sweep.js";
import { ArtifactStatus, type ArtifactDoc } from "../../src/domain/index.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { useTestS3 } from "../helpers/s3.js";

const HOUR = 3_600_000;

describe("ArtifactSweeper", () => {
  const db = useEmulatedMongo("artifact-sweep");
  const t = useTestS3();

  const doc = (id: string, over: Partial<ArtifactDoc>): ArtifactDoc => ({
    _id: id,
    ownerId: "u1",
    name: `${id}.sh`,
    size: 3,
    sha256: "a".repeat(64),
    status: ArtifactStatus.PENDING,
    uploadKey: `uploads/${id}`,
    blobKey: null,
    createdAt: new Date(0),
    completedAt: null,
    expiresAt: null,
    purgeAt: null,
    ...over,
  });
  const put = (key: string) => t.s3.blobs.put(key, "abc", { contentType: "application/octet-stream" });

  it("deletes expired uploads with their bytes, finishes stale deletions unless a job uses the artifact again, and removes objects no document claims", async () => {
    const { mongo } = db;
    const { blobs } = t.s3;
    // The objects are "now" on the server's clock; the sweep's clock is a day later, past every grace.
    const now = Date.now() + 24 * HOUR;
    await mongo.c.artifacts.insertMany([
      doc("expired", { expiresAt: new Date(now - 1) }),
      doc("open", { expiresAt: new Date(now + HOUR) }),
      doc("stale-del", { status: ArtifactStatus.DELETING, blobKey: "artifacts/stale-del", deletingAt: new Date(now - HOUR) }),
      doc("stale-used", { status: ArtifactStatus.DELETING, blobKey: "artifacts/stale-used", deletingAt: new Date(now - HOUR) }),
      doc("fresh-del", { status: ArtifactStatus.DELETING, blobKey: "artifacts/fresh-del", deletingAt: new Date(now - 1000) }),
      doc("done", { status: ArtifactStatus.COMPLETE, blobKey: "artifacts/done" }),
    ]);
    await mongo.c.jobs.insertOne({ _id: "job-using", name: "uses-it", ownerId: "u1", spec: { artifactId: "stale-used" } } as never);
    for (const k of ["uploads/expired", "uploads/open", "artifacts/stale-del", "artifacts/stale-used", "artifacts/fresh-del", "artifacts/done"]) await put(k);
    // Orphans: an upload PUT again after completion, and bytes whose document is gone.
    await put("uploads/done");
    await put("artifacts/nobody");

    const sweeper = new ArtifactSweeper({ mongo, blobs, clock: () => now, log: silentLogger(), uploadTtlMs: HOUR });
    const out = await sweeper.sweepOnce();
    expect(out).toEqual({ expired: 1, deletionsFinished: 1, orphans: 2 });

    const left = (await mongo.c.artifacts.find({}).toArray()).map((d) => `${d._id}:${d.status}`).sort();
    expect(left).toEqual(["done:COMPLETE", "fresh-del:DELETING", "open:PENDING", "stale-used:COMPLETE"]);
    const keys: string[] = [];
    for await (const o of blobs.list("")) keys.push(o.key);
    expect(keys.sort()).toEqual(["artifacts/done", "artifacts/fresh-del", "artifacts/stale-used", "uploads/open"]);
    // Nothing more to do on a second pass.
    expect(await sweeper.sweepOnce()).toEqual({ expired: 0, deletionsFinished: 0, orphans: 0 });
  });
});

/** The fire ledger as users read it. */
import type { Filter } from "mongodb";
import type { FireDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

/** A page of the job's ledger, newest slot first. */
export async function listFiresOfJob(mongo: Mongo, jobId: string, page: PageQuery): Promise<Page<FireDoc>> {
  const docs = await mongo.c.fires
    .find({ jobId, ...afterDesc("slotAt", page.after) } as Filter<FireDoc>)
    .sort({ slotAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.slotAt);
}

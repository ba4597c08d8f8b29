/**
 * The `alertFirings` collection: one document per (rule, subject), inserted once (a duplicate `_id`
 * is the same alert seen again: by a second scan, another scheduler, or after a restart), then
 * assigned to exactly one delivery by a conditional update.
 */
import type { AlertFiringDoc } from "../../domain/index.js";
import { isDuplicateKey, type Mongo } from "../mongo.js";
import { alertCollections } from "./collections.js";

/** Inserts the firings not stored yet; returns those that were new. */
export async function insertFirings(mongo: Mongo, docs: readonly AlertFiringDoc[]): Promise<AlertFiringDoc[]> {
  if (docs.length === 0) return [];
  const firings = alertCollections(mongo).firings;
  try {
    await firings.insertMany(docs as AlertFiringDoc[], { ordered: false });
    return [...docs];
  } catch (e) {
    if (!isDuplicateKey(e)) throw e;
    const dup = new Set(duplicateIndexes(e));
    if (dup.size === 0) {
      // The driver did not say which: ask the store which of them are ours.
      const ids = docs.map((d) => d._id);
      const stored = await firings.find({ _id: { $in: ids } }, { projection: { createdAt: 1 } }).toArray();
      const at = new Map(stored.map((s) => [s._id, s.createdAt.getTime()]));
      return docs.filter((d) => at.get(d._id) === d.createdAt.getTime());
    }
    return docs.filter((_, i) => !dup.has(i));
  }
}

function duplicateIndexes(e: unknown): number[] {
  const errs = (e as { writeErrors?: Array<{ index: number; code: number }> | { index: number; code: number } }).writeErrors;
  const list = Array.isArray(errs) ? errs : errs ? [errs] : [];
  return list.filter((w) => w.code === 11000).map((w) => w.index);
}

/** The rules with firings not yet delivered, and the oldest such firing's time for each. */
export async function pendingFiringRules(mongo: Mongo, limit: number): Promise<Array<{ ruleId: string; oldest: Date; count: number }>> {
  const rows = await alertCollections(mongo)
    .firings.aggregate<{ _id: string; oldest: Date; count: number }>([
      { $match: { deliveryId: null } },
      { $group: { _id: "$ruleId", oldest: { $min: "$at" }, count: { $sum: 1 } } },
      { $limit: limit },
    ])
    .toArray();
  return rows.map((r) => ({ ruleId: r._id, oldest: r.oldest, count: r.count }));
}

/** A rule's firings not yet in a delivery, oldest first. */
export function pendingFirings(mongo: Mongo, ruleId: string, limit: number): Promise<AlertFiringDoc[]> {
  return alertCollections(mongo).firings.find({ deliveryId: null, ruleId }).sort({ at: 1, _id: 1 }).limit(limit).toArray();
}

/** Gives the firings still without a delivery to `deliveryId`; returns those it now carries. */
export async function assignFirings(mongo: Mongo, ids: readonly string[], deliveryId: string): Promise<AlertFiringDoc[]> {
  const firings = alertCollections(mongo).firings;
  await firings.updateMany({ _id: { $in: [...ids] }, deliveryId: null }, { $set: { deliveryId } });
  return firings.find({ deliveryId }).sort({ at: 1, _id: 1 }).toArray();
}

/** Whether the firing `id` is stored (it may have expired: firings are kept ALERT_RETENTION_S). */
export async function firingExists(mongo: Mongo, id: string): Promise<boolean> {
  return (await alertCollections(mongo).firings.countDocuments({ _id: id }, { limit: 1 })) > 0;
}

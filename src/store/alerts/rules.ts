/** The `alertRules` collection: a user's rules, read and changed by id; every rule, for the alert engine. */
import type { AlertRuleDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";
import { alertCollections } from "./collections.js";

export async function insertAlertRule(mongo: Mongo, doc: AlertRuleDoc): Promise<void> {
  await alertCollections(mongo).rules.insertOne(doc);
}

export function countAlertRules(mongo: Mongo, ownerId: string): Promise<number> {
  return alertCollections(mongo).rules.countDocuments({ ownerId });
}

export function findAlertRule(mongo: Mongo, id: string): Promise<AlertRuleDoc | null> {
  return alertCollections(mongo).rules.findOne({ _id: id });
}

/**
 * A page of one owner's rules (null: everyone's), newest first (`createdAt`, then `_id`: a unique
 * order that rules made, changed or deleted meanwhile do not move). Indexed: owner_created_id
 * (one owner), created_id (everyone's).
 */
export async function listAlertRules(mongo: Mongo, ownerId: string | null, page: PageQuery): Promise<Page<AlertRuleDoc>> {
  const docs = await alertCollections(mongo)
    .rules.find({ ...(ownerId === null ? {} : { ownerId }), ...afterDesc("createdAt", page.after) })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
}

/** Every rule (the alert engine matches events against them), at most `limit`. */
export function allAlertRules(mongo: Mongo, limit: number): Promise<AlertRuleDoc[]> {
  return alertCollections(mongo).rules.find({}).limit(limit).toArray();
}

/**
 * `ownerId`'s rules on SCHEDULE_SILENT that name no job nor DAG (all of the owner's schedules), at
 * most `limit`; read through owner_created_id when a recurring job is made (a user has at most
 * KAIROS_ALERT_MAX_RULES rules).
 */
export function allJobsSilenceRules(mongo: Mongo, ownerId: string, limit: number): Promise<AlertRuleDoc[]> {
  return alertCollections(mongo).rules.find({ ownerId, on: "SCHEDULE_SILENT", jobId: null, dagId: null, cluster: { $ne: true } }).limit(limit).toArray();
}

/** The ids of `ownerId`'s rules on SCHEDULE_SILENT (any scope), at most `limit`; read through owner_created_id. */
export async function silenceRuleIdsOfOwner(mongo: Mongo, ownerId: string, limit: number): Promise<string[]> {
  const docs = await alertCollections(mongo).rules.find({ ownerId, on: "SCHEDULE_SILENT" }, { projection: { _id: 1 } }).limit(limit).toArray();
  return docs.map((d) => d._id);
}

/** Sets the given fields of a rule; the rule after, or null when it is gone. */
export function setAlertRule(mongo: Mongo, id: string, set: Partial<AlertRuleDoc>): Promise<AlertRuleDoc | null> {
  return alertCollections(mongo).rules.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: "after" });
}

/** Deletes a rule with its firings not yet delivered and its state; true when it was there. */
export async function deleteAlertRule(mongo: Mongo, id: string): Promise<boolean> {
  const a = alertCollections(mongo);
  const { deletedCount } = await a.rules.deleteOne({ _id: id });
  await a.firings.deleteMany({ ruleId: id, deliveryId: null });
  await a.states.deleteMany({ ruleId: id });
  return deletedCount > 0;
}

/** Deletes every rule of an owner (the user was deleted). */
export async function deleteOwnerAlertRules(mongo: Mongo, ownerId: string): Promise<number> {
  const ids = (await alertCollections(mongo).rules.find({ ownerId }, { projection: { _id: 1 } }).toArray()).map((r) => r._id);
  for (const id of ids) await deleteAlertRule(mongo, id);
  return ids.length;
}

/** Records when the rule's last delivery was made (the group window counts from it). */
export async function markAlertDelivered(mongo: Mongo, id: string, at: Date): Promise<void> {
  await alertCollections(mongo).rules.updateOne({ _id: id }, { $set: { lastDeliveryAt: at } });
}

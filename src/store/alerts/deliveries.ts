/**
 * The `alertDeliveries` collection, the outbox of webhook calls: inserted, then put together (body
 * set), then taken by one sender at a time (a conditional update that leases it), then marked
 * delivered, due again later, or given up.
 */
import { AlertDeliveryStatus, type AlertDeliveryDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";
import { alertCollections } from "./collections.js";

export async function insertDelivery(mongo: Mongo, doc: AlertDeliveryDoc): Promise<void> {
  await alertCollections(mongo).deliveries.insertOne(doc);
}

/** Deliveries inserted and not put together yet, older than `before` (a dispatcher died in between) or any, at most `limit`. */
export function unbuiltDeliveries(mongo: Mongo, before: Date, limit: number): Promise<AlertDeliveryDoc[]> {
  return alertCollections(mongo).deliveries.find({ status: AlertDeliveryStatus.PENDING, body: null, createdAt: { $lte: before } }).limit(limit).toArray();
}

/** Sets the body and what it carries; only while it has none. */
export async function buildDelivery(mongo: Mongo, id: string, set: Pick<AlertDeliveryDoc, "body" | "count" | "firingIds" | "runIds" | "events">): Promise<boolean> {
  const r = await alertCollections(mongo).deliveries.updateOne({ _id: id, body: null }, { $set: set });
  return r.modifiedCount > 0;
}

export async function dropDelivery(mongo: Mongo, id: string): Promise<void> {
  await alertCollections(mongo).deliveries.deleteOne({ _id: id });
}

/** Deliveries due at `now`: PENDING and due, or SENDING with the sender's lease ended; none of `skipOwners`'. */
export function dueDeliveries(mongo: Mongo, now: Date, limit: number, skipOwners: readonly string[] = []): Promise<AlertDeliveryDoc[]> {
  return alertCollections(mongo)
    .deliveries.find({
      ...(skipOwners.length > 0 ? { ownerId: { $nin: [...skipOwners] } } : {}),
      $or: [
        { status: AlertDeliveryStatus.PENDING, nextAttemptAt: { $lte: now }, body: { $ne: null } },
        { status: AlertDeliveryStatus.SENDING, leaseUntil: { $lte: now } },
      ],
    })
    .sort({ nextAttemptAt: 1 })
    .limit(limit)
    .toArray();
}

/**
 * Takes a delivery for one attempt, conditional on the state it was read in (status, attempts):
 * of two senders, one wins. The delivery after, or null when another took it.
 */
export function takeDelivery(mongo: Mongo, d: AlertDeliveryDoc, now: Date, leaseUntil: Date): Promise<AlertDeliveryDoc | null> {
  return alertCollections(mongo).deliveries.findOneAndUpdate(
    { _id: d._id, status: d.status, attempts: d.attempts },
    { $set: { status: AlertDeliveryStatus.SENDING, leaseUntil, nextAttemptAt: now }, $inc: { attempts: 1 } },
    { returnDocument: "after" },
  );
}

/** Records an attempt's outcome, conditional on the attempt still being the holder's. */
export async function settleDelivery(mongo: Mongo, id: string, attempts: number, set: Partial<AlertDeliveryDoc>): Promise<boolean> {
  const r = await alertCollections(mongo).deliveries.updateOne({ _id: id, attempts, status: AlertDeliveryStatus.SENDING }, { $set: { ...set, leaseUntil: null } });
  return r.modifiedCount > 0;
}

/** A rule's deliveries, newest first. */
export async function deliveriesPage(mongo: Mongo, ruleId: string, page: PageQuery): Promise<Page<AlertDeliveryDoc>> {
  const docs = await alertCollections(mongo)
    .deliveries.find({ ruleId, ...afterDesc("createdAt", page.after) })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
}

export function findDelivery(mongo: Mongo, id: string): Promise<AlertDeliveryDoc | null> {
  return alertCollections(mongo).deliveries.findOne({ _id: id });
}

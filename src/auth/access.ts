/**
 * Who may see and change what: the one place ownership is decided. A user sees their own
 * documents; an admin sees everyone's. Another user's object is refused exactly like a missing
 * one (NOT_FOUND, same message), so object ids of other tenants cannot be probed.
 */
import type { Filter } from "mongodb";
import { ForbiddenError, NotFoundError, NotYoursError } from "../domain/errors.js";
import type { Principal } from "./tokens.js";

/** Whether the caller may see a document owned by `ownerId`. */
export function canSee(p: Principal, ownerId: string): boolean {
  return p.role === "ADMIN" || p.userId === ownerId;
}

/** Restricts a filter to the caller's own documents unless the caller is an admin. */
export function ownerScope<T extends { ownerId: string }>(caller: Principal, filter: Filter<T>): Filter<T> {
  return caller.role === "ADMIN" ? filter : ({ ...filter, ownerId: caller.userId } as Filter<T>);
}

/** The document if the caller may see it; NOT_FOUND when it is missing or someone else's. */
export function visible<T extends { ownerId: string }>(p: Principal, entity: string, id: string, doc: T | null | undefined): T {
  if (!doc) throw new NotFoundError(entity, id);
  if (!canSee(p, doc.ownerId)) throw new NotYoursError(entity, id);
  return doc;
}

/**
 * A user id the caller may act on: their own, or any for an admin. Another user's id answers
 * NOT_FOUND like an unknown one (users are objects too).
 */
export function actOnUser(p: Principal, userId: string): string {
  if (p.role !== "ADMIN" && userId !== p.userId) throw new NotYoursError("user", userId);
  return userId;
}

export function assertAdmin(p: Principal, targetId: string | null = null): void {
  if (p.role !== "ADMIN") throw new ForbiddenError("only administrators may do this", targetId);
}

/**
 * Who may see and change what: the one place ownership is decided. A user sees their own
 * documents; an admin sees everyone's. Another user's object is refused exactly like a missing
 * one (NOT_FOUND, same message), so object ids of other tenants cannot be probed; the refusal is
 * a NotYoursError, which the API logs as a refused cross-tenant attempt.
 */
import { ForbiddenError, NotFoundError, NotYoursError } from "../domain/index.js";
import type { Principal } from "./tokens.js";

/** Whether the caller may see a document owned by `ownerId`. */
export function canSee(p: Principal, ownerId: string): boolean {
  return p.role === "ADMIN" || p.userId === ownerId;
}

/** The documents among `docs` the caller may see. */
export function onlyVisible<T extends { ownerId: string }>(p: Principal, docs: readonly T[]): T[] {
  return docs.filter((d) => canSee(p, d.ownerId));
}

/**
 * Whose documents a listing by the caller holds: the caller's own, or everyone's (null) for an
 * admin. The store adds the owner to its filter when there is one.
 */
export function listedOwner(p: Principal): string | null {
  return p.role === "ADMIN" ? null : p.userId;
}

/**
 * The owner a listing asks for by name (`asked`), checked: an admin may name anyone, a user only
 * themselves (FORBIDDEN otherwise, naming `what` is listed). Not asked: as {@link listedOwner}.
 */
export function askedOwner(p: Principal, asked: string | null | undefined, what: string): string | null {
  if (!asked) return listedOwner(p);
  if (p.role !== "ADMIN" && asked !== p.userId) throw new ForbiddenError(`only administrators may list other users' ${what}`);
  return asked;
}

/** The document if the caller may see it; NOT_FOUND when it is missing or someone else's. */
export function visible<T extends { ownerId: string }>(p: Principal, entity: string, id: string, doc: T | null | undefined): T {
  if (!doc) throw new NotFoundError(entity, id);
  if (!canSee(p, doc.ownerId)) throw new NotYoursError(entity, id);
  return doc;
}

/**
 * A job the caller may see and change: as {@link visible}, except that a DAG's timer job (the job
 * that carries a scheduled DAG's schedule) is NOT_FOUND to every caller: users see and change it
 * as the DAG (src/dag), whose engine acts on it as the DAG, not as a user (core/jobs JobActor).
 */
export function visibleJob<T extends { ownerId: string; dagId?: string | null }>(p: Principal, id: string, doc: T | null | undefined): T {
  if (doc?.dagId) throw new NotFoundError("job", id);
  return visible(p, "job", id, doc);
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

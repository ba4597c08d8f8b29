/** auth/access.ts: the one place that decides who sees what. */
import { describe, expect, it } from "vitest";
import { askedOwner, canSee, listedOwner, onlyVisible, visible } from "../../src/auth/access.js";
import type { Principal } from "../../src/auth/tokens.js";
import { ForbiddenError, NotFoundError, NotYoursError } from "../../src/domain/errors.js";

const alice: Principal = { userId: "alice", username: "alice", role: "USER" };
const admin: Principal = { userId: "root", username: "root", role: "ADMIN" };

describe("access", () => {
  it("lets a user see their own documents and an admin everyone's", () => {
    expect(canSee(alice, "alice")).toBe(true);
    expect(canSee(alice, "bob")).toBe(false);
    expect(canSee(admin, "bob")).toBe(true);
    const docs = [{ ownerId: "alice" }, { ownerId: "bob" }];
    expect(onlyVisible(alice, docs)).toEqual([{ ownerId: "alice" }]);
    expect(onlyVisible(admin, docs)).toEqual(docs);
  });

  it("answers another user's document exactly like a missing one, as a refusal the API logs", () => {
    const missing = (() => {
      try {
        visible(alice, "job", "j1", null);
      } catch (e) {
        return e as NotFoundError;
      }
    })();
    const foreign = (() => {
      try {
        visible(alice, "job", "j1", { ownerId: "bob" });
      } catch (e) {
        return e as NotFoundError;
      }
    })();
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).not.toBeInstanceOf(NotYoursError);
    expect(foreign).toBeInstanceOf(NotYoursError);
    expect(foreign!.message).toBe(missing!.message);
    expect(visible(admin, "job", "j1", { ownerId: "bob" })).toEqual({ ownerId: "bob" });
  });

  it("scopes listings to the caller, except for admins, who may name an owner", () => {
    expect(listedOwner(alice)).toBe("alice");
    expect(listedOwner(admin)).toBeNull();
    expect(askedOwner(alice, null, "jobs")).toBe("alice");
    expect(askedOwner(alice, "alice", "jobs")).toBe("alice");
    expect(() => askedOwner(alice, "bob", "jobs")).toThrow(ForbiddenError);
    expect(() => askedOwner(alice, "bob", "jobs")).toThrow("only administrators may list other users' jobs");
    expect(askedOwner(admin, "bob", "jobs")).toBe("bob");
    expect(askedOwner(admin, undefined, "jobs")).toBeNull();
  });
});

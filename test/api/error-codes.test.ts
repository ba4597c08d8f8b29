/**
 * A refused change says what the client should do by its code (docs/api-errors.md): ABORTED —
 * retry the same call; FAILED_PRECONDITION — change the request or the state first;
 * RESOURCE_EXHAUSTED — wait until some of a per-user bound is freed. The three reach the client
 * unmasked. (A duplicate name's FAILED_PRECONDITION is asserted in validation.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { formatError } from "../../src/api/index.js";
import { ConcurrentChangeError, InvalidTransitionError, LimitReachedError, PreconditionError } from "../../src/domain/index.js";
import { toGraphQLError } from "../../src/resolvers/errors.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp();

describe("conflict error codes", () => {
  it("map each kind of conflict to its own code, and none is masked as an internal error", () => {
    const cases = [
      [new ConcurrentChangeError("job j1 was changed by someone else meanwhile; read it again and retry"), "ABORTED"],
      [new PreconditionError("job j1 is paused; resume it before rescheduling"), "FAILED_PRECONDITION"],
      [new InvalidTransitionError("r1", "SUCCEEDED", "RUNNING"), "FAILED_PRECONDITION"],
      [new LimitReachedError("at most 100 active API keys per user; revoke one first (revokeApiKey)"), "RESOURCE_EXHAUSTED"],
    ] as const;
    for (const [err, expected] of cases) {
      const mapped = toGraphQLError(err)!;
      expect(mapped.extensions.code).toBe(expected);
      const sent = formatError({ message: mapped.message, extensions: mapped.extensions });
      expect(sent).toEqual({ message: err.message, extensions: { code: expected } });
    }
  });

  it("RESOURCE_EXHAUSTED: API keys over the 100 active a user may hold, even when asked for all at once; free again once one is revoked", async () => {
    const u = await makeUser(t.app, t.admin, "codes-limit");
    const CREATE = `mutation($name: String!) { createApiKey(name: $name, scope: READ_ONLY) { apiKey { id } } }`;
    const burst = await Promise.all(Array.from({ length: 130 }, (_, i) => gql<{ createApiKey: { apiKey: { id: string } } }>(t.app.url, CREATE, { name: `k${i}` }, u.token)));
    const active = await t.app.services.mongo.c.apiKeys.countDocuments({ ownerId: u.id, revokedAt: null });
    expect(active).toBeLessThanOrEqual(100);
    const refused = burst.filter((r) => r.errors);
    expect(refused.length).toBeGreaterThanOrEqual(30);
    for (const r of refused) {
      expect(code(r)).toBe("RESOURCE_EXHAUSTED");
      expect(message(r)).toBe("at most 100 active API keys per user; revoke one first (revokeApiKey)");
    }
    // Topped up one at a time to the bound, the next is refused; a revoked key frees its place.
    for (let i = active; i < 100; i++) await gqlOk(t.app.url, CREATE, { name: `fill${i}` }, u.token);
    expect(code(await gql(t.app.url, CREATE, { name: "one-too-many" }, u.token))).toBe("RESOURCE_EXHAUSTED");
    const first = burst.find((r) => !r.errors)!.data!.createApiKey.apiKey.id;
    await gqlOk(t.app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: first }, u.token);
    await gqlOk(t.app.url, CREATE, { name: "after-revoking" }, u.token);
  });
});

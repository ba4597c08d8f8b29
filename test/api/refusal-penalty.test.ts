/**
 * A document the API refuses (over a query limit, unparsable, invalid) costs its sender
 * KAIROS_RATE_REFUSED_COST requests of its budget, so an abusive client is soon answered with a
 * cheap 429 instead of being parsed and refused at full speed; other users are not touched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { login } from "../helpers/graphql.js";
import { makeUser } from "../helpers/accounts.js";
import { nestedJobsRuns } from "../helpers/abuse.js";

let app: TestApp;
let abuser: string;
let other: string;

beforeAll(async () => {
  app = await startTestApp({ env: { KAIROS_RATE_REQUESTS: "100/PT1M", KAIROS_RATE_REFUSED_COST: "20" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  abuser = (await makeUser(app, admin, "abuser")).token;
  other = (await makeUser(app, admin, "other")).token;
});
afterAll(async () => {
  await app?.dispose();
});

const post = (token: string, query: string) =>
  fetch(app.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query }) });

describe("refused documents cost more of the request budget", () => {
  it("turns a sender of refused documents into 429s after budget ÷ cost refusals, and leaves other users be", async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await post(abuser, nestedJobsRuns(15))).status);
    expect(codes).toEqual([400, 400, 400, 400, 400]); // refused by the depth limit, 20 requests each: 100 spent
    const next = await post(abuser, "{ me { id } }");
    expect(next.status).toBe(429);
    expect(next.headers.get("retry-after")).toMatch(/^\d+$/);
    const body = (await next.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]!.extensions.code).toBe("RATE_LIMITED");
    const fine = await post(other, "{ me { username } }");
    expect(fine.status).toBe(200);
  });
});

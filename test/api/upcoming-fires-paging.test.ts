/**
 * `upcomingFires` is a Relay connection (issue #33): the caller's jobs due within the window, each
 * once at its next fire (a run staged ahead of its time: that time), soonest first with the job id
 * as tiebreak; `first` (1–100, default 20) and an `after` naming a position (a fire instant and a
 * job id). Walking it never lists a job twice nor skips one, jobs due at the same instant included;
 * a job made while paging is listed when its fire comes after the cursor, not when it comes before.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { walk, type Conn } from "../helpers/paging.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();
const MIN = 60_000;

const UPCOMING = `query($within: String!, $first: Int, $after: String) {
  upcomingFires(within: $within, first: $first, after: $after) { edges { cursor node { at job { id name } } } pageInfo { hasNextPage endCursor } } }`;

interface Row {
  at: string;
  job: { id: string; name: string };
}

let user: { id: string; token: string };
let me: Principal;
/** Far enough ahead that nothing stages or fires while the test runs (set when the jobs are made). */
let T1 = 0;
let staged = "";
/** When the staged run is due: between later-5 and later-6. */
const stagedAt = () => T1 + 25 * MIN + 30_000;

const page = async (vars: Record<string, unknown>, token = user.token): Promise<Conn<Row>> =>
  (await gqlOk<{ upcomingFires: Conn<Row> }>(t.app.url, UPCOMING, { within: "PT2H", ...vars }, token)).upcomingFires;

const once = async (name: string, at: number) =>
  (await t.app.services.jobs.create(me, { name, schedule: { kind: "ONCE", at }, spec: { kind: "COMMAND", command: "true", pool: "upcoming-none" } }))._id;

/** The order the API promises: by instant, then by job id. */
const order = (rows: Array<{ at: number; id: string }>) => [...rows].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((r) => r.id);

beforeAll(async () => {
  user = await makeUser(t.app, t.admin, "upcoming-pager");
  me = { userId: user.id, username: "upcoming-pager", role: "USER" };
  T1 = Date.now() + 30 * MIN;
  // Six jobs due at the same instant, ten five minutes apart after it.
  for (let i = 0; i < 6; i++) await once(`tie-${i}`, T1);
  for (let i = 1; i <= 10; i++) await once(`later-${i}`, T1 + i * 5 * MIN);
  // A job due late, with a run staged ahead of its time between later-5 and later-6: listed once, at the staged time.
  staged = await once("staged", T1 + 70 * MIN);
  await t.app.services.mongo.c.runs.insertOne(queuedRunDoc(user.id, { jobId: staged, pool: "upcoming-none", notBefore: new Date(stagedAt()), queuedAt: new Date() }));
  // A paused job is not coming due.
  const paused = await once("paused", T1 + 10 * MIN);
  await t.app.services.jobs.pause(me, paused);
}, 60_000);

describe("upcomingFires is a connection", () => {
  it("walks every job coming due once, soonest first, ties by job id, a staged fire at its time", async () => {
    const docs = await t.app.services.mongo.c.jobs.find({ ownerId: user.id, paused: false }).toArray();
    const due = docs.map((d) => ({ id: d._id, at: d._id === staged ? stagedAt() : d.nextFireAt!.getTime() }));
    expect(due).toHaveLength(17);
    const added: string[] = [];
    const rows = await walk(
      (after) => page({ first: 4, after }),
      async (n) => {
        // Made between pages: one due before every fire listed so far (never listed), one due after them all.
        if (n === 2) {
          added.push(await once("made-before", T1 - MIN));
          added.push(await once("made-after", T1 + 80 * MIN));
        }
      },
    );
    const ids = rows.map((r) => r.job.id);
    expect(new Set(ids).size, "no job twice").toBe(ids.length);
    const [before, after] = added;
    expect(ids).not.toContain(before);
    expect(ids.at(-1)).toBe(after);
    expect(ids.slice(0, -1)).toEqual(order(due));
    // The staged job at its staged time; the tied ones at the same instant.
    expect(Date.parse(rows.find((r) => r.job.id === staged)!.at)).toBe(stagedAt());
    expect(rows.slice(0, 6).every((r) => Date.parse(r.at) === T1)).toBe(true);
    expect(rows.find((r) => r.job.name === "paused")).toBeUndefined();
    // The window still bounds it: within PT32M holds only the six due at T1 (and the one made before them).
    const near = await walk((a) => page({ within: "PT32M", first: 2, after: a }), async () => undefined);
    expect(near.map((r) => r.job.name).sort()).toEqual(["made-before", "tie-0", "tie-1", "tie-2", "tie-3", "tie-4", "tie-5"]);
  });

  it("pages inside a run of jobs due at the same instant without repeating or skipping one", async () => {
    const first = await page({ within: "PT32M", first: 3 });
    const second = await page({ within: "PT32M", first: 3, after: first.pageInfo.endCursor });
    const third = await page({ within: "PT32M", first: 3, after: second.pageInfo.endCursor });
    const ids = [first, second, third].flatMap((c) => c.edges.map((e) => e.node.job.id));
    expect(new Set(ids).size).toBe(7);
    expect(third.pageInfo.hasNextPage).toBe(false);
    expect(third.edges).toHaveLength(1);
  });

  it("takes first 1–100 (default 20) and refuses a cursor it did not give, saying what is allowed", async () => {
    for (let i = 0; i < 3; i++) await once(`extra-${i}`, T1 + 85 * MIN);
    // 17 + the two made while paging + these 3.
    expect((await page({ within: "PT3H" })).edges).toHaveLength(20);
    expect((await page({ within: "PT3H", first: 100 })).edges).toHaveLength(22);
    for (const first of [0, 101, -1]) {
      const r = await gql(t.app.url, UPCOMING, { within: "PT1H", first }, user.token);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    const nodesCursor = Buffer.from(JSON.stringify(["node-a", Date.now(), "id"])).toString("base64url");
    for (const after of ["not-a-cursor", nodesCursor, Buffer.from(JSON.stringify([1e300, "x"])).toString("base64url"), Buffer.from("[1]").toString("base64url")]) {
      const r = await gql(t.app.url, UPCOMING, { within: "PT1H", after }, user.token);
      expect(code(r), after).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe("after: not a cursor returned by this list (use its pageInfo.endCursor)");
    }
    const far = await gql(t.app.url, UPCOMING, { within: "P32D" }, user.token);
    expect(code(far)).toBe("BAD_USER_INPUT");
    expect(message(far)).toBe("within: at most P31D");
  });

  it("reads along an index in the page's order; the old one on nextFireAt alone is gone", async () => {
    const indexes = await t.app.services.mongo.c.jobs.listIndexes().toArray();
    const byName = new Map(indexes.map((i) => [i.name as string, i.key as Record<string, number>]));
    expect(byName.get("nextFire_id")).toEqual({ nextFireAt: 1, _id: 1 });
    expect(byName.has("nextFireAt")).toBe(false);
  });
});

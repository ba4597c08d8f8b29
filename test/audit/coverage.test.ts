/**
 * Every mutation of the schema writes an audit entry (issue #31, "Done means"): the mutations are
 * enumerated from the built schema, each is called on a dev app with arguments made from its
 * types (fake ids, so most are refused), and each must leave an entry naming it, with the outcome
 * its caller got: a refused call is recorded with its error code. A mutation added later is
 * covered by the same loop, with no list to update.
 */
import { describe, expect, it } from "vitest";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
} from "graphql";
import { buildKairosSchema } from "../../src/resolvers/build-schema.js";
import { AUDIT_SUBJECTS } from "../../src/resolvers/audit-subjects.js";
import { useTestApp } from "../helpers/app.js";
import { gql } from "../helpers/graphql.js";

const t = useTestApp();
const FAKE_ID = "0123456789abcdef01234567";

/** A value of the type: required fields filled, lists of one, the first enum value, a fake id. */
function valueOf(type: GraphQLInputType, depth = 0): unknown {
  if (isNonNullType(type)) return valueOf(type.ofType, depth);
  if (isListType(type)) return [valueOf(type.ofType, depth + 1)];
  const named = getNamedType(type) as GraphQLNamedType;
  if (isEnumType(named)) return named.getValues()[0]!.value;
  if (isInputObjectType(named)) {
    const out: Record<string, unknown> = {};
    if (depth > 6) return out;
    for (const f of Object.values(named.getFields())) if (isNonNullType(f.type) && f.defaultValue === undefined) out[f.name] = valueOf(f.type, depth + 1);
    return out;
  }
  if (isScalarType(named)) {
    switch (named.name) {
      case "ID":
        return FAKE_ID;
      case "Int":
        return 1;
      case "Float":
        return 1.5;
      case "Boolean":
        return true;
      case "DateTime":
        return "2099-01-01T00:00:00Z";
      case "JSONObject":
        return {};
      case "JSON":
        return {};
      default:
        return "audit-coverage";
    }
  }
  throw new Error(`no value for ${String(named)}`);
}

const selectionOf = (type: GraphQLOutputType): string => (isScalarType(getNamedType(type)) || isEnumType(getNamedType(type)) ? "" : " { __typename }");

describe("audit coverage", () => {
  it("every mutation of the schema, called with made-up arguments, writes an entry with the outcome its caller got", async () => {
    const schema = await buildKairosSchema();
    const mutations = Object.values(schema.getMutationType()!.getFields());
    expect(mutations.length).toBeGreaterThan(30);
    const uncovered: string[] = [];
    const wrong: string[] = [];
    for (const m of mutations) {
      const required = m.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
      const decl = required.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
      const call = required.map((a) => `${a.name}: $${a.name}`).join(", ");
      const query = `mutation${decl ? `(${decl})` : ""} { ${m.name}${call ? `(${call})` : ""}${selectionOf(m.type)} }`;
      const variables = Object.fromEntries(required.map((a) => [a.name, valueOf(a.type)]));
      const before = await t.app.services.mongo.db.collection("audit").countDocuments({ action: m.name });
      const r = await gql(t.app.url, query, variables, t.admin);
      const refused = r.errors?.[0]?.extensions?.code;
      // Made-up arguments must reach the resolver: a request refused before it (invalid document or variables) would prove nothing.
      expect(["GRAPHQL_VALIDATION_FAILED", "BAD_REQUEST", "GRAPHQL_PARSE_FAILED"], `${m.name}: ${JSON.stringify(r.errors)}`).not.toContain(refused);
      const entries = await t.app.services.mongo.db.collection("audit").find({ action: m.name }).sort({ seq: -1 }).toArray();
      if (entries.length <= before) {
        // The answer says whether the resolver ran at all (a made-up value a new scalar refuses does not reach it).
        uncovered.push(`${m.name} (answered ${JSON.stringify(r.errors?.[0] ?? "OK")})`);
        continue;
      }
      if (entries[0]!.outcome !== (refused ?? "OK")) wrong.push(`${m.name}: recorded ${entries[0]!.outcome}, answered ${refused ?? "OK"}`);
    }
    expect(uncovered, "mutations that wrote no audit entry").toEqual([]);
    expect(wrong).toEqual([]);
    // And the chain those calls made holds.
    const v = await t.app.services.audit.verify();
    expect(v.broken).toBeNull();
    expect(v.checked).toBeGreaterThanOrEqual(mutations.length);
  });

  it("the mutations given a before-image exist in the schema (a renamed one would silently lose its before/after)", async () => {
    const schema = await buildKairosSchema();
    const names = Object.keys(schema.getMutationType()!.getFields());
    for (const name of Object.keys(AUDIT_SUBJECTS)) expect(names, name).toContain(name);
  });
});

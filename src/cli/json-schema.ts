/**
 * A JSON Schema (draft-07) of the files `kairos apply` reads, generated from the GraphQL input types
 * of schema.graphql (CreateJobInput, and CreateDagInput for a document with `tasks`), so that
 * editors complete and check them (`kairos schema json > schemas/kairos.schema.json`), and a small
 * validator of the subset of JSON Schema the generator emits, whose errors carry the field's path.
 *
 * Written here rather than taken from a library: the generators on npm start from introspection
 * results or SDL and emit one schema per type with their own conventions for nullability and
 * descriptions; the whole job is ~60 lines over graphql-js's own type objects.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildSchema,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";

export type JsonSchema = {
  $schema?: string;
  $id?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  enum?: string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
  default?: unknown;
};

/** schema.graphql of the installed package: found upwards from this file (src/cli or dist/cli/src/cli). */
export function loadGraphqlSchema(): GraphQLSchema {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "schema.graphql");
    if (existsSync(candidate) && existsSync(join(dir, "package.json"))) return buildSchema(readFileSync(candidate, "utf8"));
    dir = dirname(dir);
  }
  throw new Error("schema.graphql not found next to the kairos package");
}

const SCALARS: Record<string, JsonSchema> = {
  String: { type: "string" },
  ID: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
  DateTime: { type: "string", format: "date-time" },
  JSON: {},
  JSONObject: { type: "object" },
};

export function jobFileSchema(schema: GraphQLSchema = loadGraphqlSchema()): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  const ref = (t: GraphQLInputType): JsonSchema => {
    if (t instanceof GraphQLNonNull) return ref(t.ofType);
    if (t instanceof GraphQLList) return { type: "array", items: ref(t.ofType) };
    if (t instanceof GraphQLScalarType) return { ...(SCALARS[t.name] ?? {}) };
    if (t instanceof GraphQLEnumType) {
      if (!definitions[t.name]) definitions[t.name] = { ...(t.description ? { description: t.description } : {}), enum: t.getValues().map((v) => v.name) };
      return { $ref: `#/definitions/${t.name}` };
    }
    const obj = t as GraphQLInputObjectType;
    if (!definitions[obj.name]) {
      const def: JsonSchema = { type: "object", additionalProperties: false, properties: {} };
      if (obj.description) def.description = obj.description;
      definitions[obj.name] = def;
      const required: string[] = [];
      for (const f of Object.values(obj.getFields())) {
        const p = ref(f.type);
        if (f.description) p.description = f.description;
        if (f.defaultValue !== undefined) p.default = f.defaultValue;
        def.properties![f.name] = p;
        if (f.type instanceof GraphQLNonNull && f.defaultValue === undefined) required.push(f.name);
      }
      if (required.length) def.required = required;
    }
    return { $ref: `#/definitions/${obj.name}` };
  };
  const job = schema.getType("CreateJobInput") as GraphQLInputObjectType;
  const dag = schema.getType("CreateDagInput") as GraphQLInputObjectType;
  ref(job);
  ref(dag);
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "A Kairos job (CreateJobInput) or, with tasks, a DAG (CreateDagInput)",
    description: "One document of a file that `kairos apply -f` reads. Generated from schema.graphql by `kairos schema json`.",
    if: { type: "object", required: ["tasks"] },
    then: { $ref: "#/definitions/CreateDagInput" },
    else: { $ref: "#/definitions/CreateJobInput" },
    definitions,
  };
}

export interface SchemaProblem {
  /** The field's path in the document, e.g. ["spec", "timeout"]. */
  path: Array<string | number>;
  message: string;
  /** The problem is a key that is not allowed (its position is the key's). */
  key?: boolean;
}

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" && Number.isInteger(v) ? "integer" : typeof v);

/** Checks `value` against the subset of JSON Schema that jobFileSchema emits. */
export function validate(root: JsonSchema, value: unknown): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const resolve = (s: JsonSchema): JsonSchema => (s.$ref ? resolve(root.definitions![s.$ref.replace("#/definitions/", "")]!) : s);
  const walk = (s0: JsonSchema, v: unknown, path: Array<string | number>): void => {
    const s = resolve(s0);
    if (s.if) {
      const ok = validate({ ...root, ...s.if, if: undefined }, v).length === 0;
      walk((ok ? s.then : s.else) ?? {}, v, path);
      return;
    }
    if (s.enum) {
      if (typeof v !== "string" || !s.enum.includes(v)) out.push({ path, message: `must be one of ${s.enum.join(", ")} (got ${JSON.stringify(v)})` });
      return;
    }
    if (s.type) {
      const t = typeOf(v);
      const want = Array.isArray(s.type) ? s.type : [s.type];
      const fits = want.includes(t) || (t === "integer" && want.includes("number"));
      if (!fits) {
        out.push({ path, message: `must be ${want.map((w) => (w === "object" ? "a mapping" : w === "array" ? "a list" : `a${/^[aeiou]/.test(w) ? "n" : ""} ${w}`)).join(" or ")} (got ${t === "object" ? "a mapping" : t === "array" ? "a list" : JSON.stringify(v)})` });
        return;
      }
      if (s.format === "date-time" && typeof v === "string" && Number.isNaN(Date.parse(v))) out.push({ path, message: `must be a date-time such as 2030-01-01T09:00:00Z (got ${JSON.stringify(v)})` });
    }
    if (Array.isArray(v) && s.items) v.forEach((item, i) => walk(s.items!, item, [...path, i]));
    if (typeOf(v) === "object") {
      const obj = v as Record<string, unknown>;
      for (const r of s.required ?? []) if (!(r in obj)) out.push({ path: [...path, r], message: "is required" });
      if (s.properties) for (const [k, child] of Object.entries(obj)) {
        const p = s.properties[k];
        if (p) walk(p, child, [...path, k]);
        else if (s.additionalProperties === false) {
          out.push({ path: [...path, k], key: true, message: `is not a field here; allowed: ${Object.keys(s.properties).join(", ")}` });
        }
      }
    }
  };
  walk(root, value, []);
  return out;
}

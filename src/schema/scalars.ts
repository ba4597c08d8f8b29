import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from "graphql";
import { DateTimeResolver, JSONObjectResolver, JSONResolver } from "graphql-scalars";
import { badDateTime } from "../timing/index.js";

/**
 * ISO-8601 / RFC 3339 date-time with a time zone, e.g. 2026-11-21T10:00:00.000Z: graphql-scalars'
 * DateTime, with refusals that say what is missing and show an example (`"2030-01-01T09:00:00"
 * has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" …`). The API
 * refuses a literal or a variable that is none before it gets here, naming its field, as
 * BAD_USER_INPUT (api/scalar-inputs.ts); these refusals stay for any other caller of the schema.
 */
export const DateTime = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  parseValue(value: unknown) {
    try {
      return DateTimeResolver.parseValue(value);
    } catch {
      throw new GraphQLError(badDateTime(value instanceof Date ? "an invalid Date" : value));
    }
  },
  parseLiteral(ast: ValueNode, variables?: Record<string, unknown> | null) {
    try {
      return DateTimeResolver.parseLiteral(ast, variables);
    } catch {
      throw new GraphQLError(`DateTime: ${dateTimeLiteralProblem(ast)}`, { nodes: ast });
    }
  },
});

const LITERAL_KINDS: Partial<Record<Kind, string>> = {
  [Kind.INT]: "a number",
  [Kind.FLOAT]: "a number",
  [Kind.BOOLEAN]: "a boolean",
  [Kind.NULL]: "null",
  [Kind.ENUM]: "an unquoted name",
  [Kind.LIST]: "a list",
  [Kind.OBJECT]: "an object",
};

/** Why a literal is no DateTime (null when it is one). */
export function dateTimeLiteralProblem(ast: ValueNode): string | null {
  if (ast.kind !== Kind.STRING) return `expected a date-time string, got ${LITERAL_KINDS[ast.kind] ?? "another value"}; a date-time is quoted, such as "2030-01-01T09:00:00Z"`;
  try {
    DateTimeResolver.parseLiteral(ast, null);
    return null;
  } catch {
    return badDateTime(ast.value);
  }
}

/** A JSON object (string values for environment maps). */
export const JSONObject = JSONObjectResolver;
/** Any JSON value (a DAG task's result). */
export const JSONValue = JSONResolver;

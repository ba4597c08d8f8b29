/**
 * A value of a scalar the API checks — an Int that is no 32-bit integer (`first: 1.5`, `1e10`,
 * `"abc"`, `99999999999`), a DateTime that is none (`at: "tomorrow"`, `"2030-01-01T09:00:00"`
 * without a zone, `at: 5`), a JSONObject that is no object (`env: "DEBUG=1"`) — is refused as
 * BAD_USER_INPUT with `extensions.field` naming its argument or input field, saying what was given
 * and what the field allows: `first: must be an integer from 1 to 100 (got 1e10)`, `schedule.at:
 * "tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as
 * "2030-01-01T09:00:00Z" …`, instead of graphql-js's "Int cannot represent non-integer value: 1e10"
 * or "Variable "$at" got invalid value …", which name neither the field nor what it takes. One
 * mechanism for every such scalar (CHECKED below); the Ints' ranges are resolvers/int-ranges.ts.
 *
 * - Written in the document: a validation rule (scalarLiterals), which reports the value on entering
 *   its argument or input field and hands the rest of the pass a copy with a valid value in its
 *   place, so graphql-js's ValuesOfCorrectType does not say it again. Apollo gives every validation
 *   error GRAPHQL_VALIDATION_FAILED; api/server.ts's formatError gives these their own code back.
 *   The document is refused whole, HTTP 400.
 * - In a variable: checked once the operation is known, before execution runs graphql-js's own
 *   coercion (scalarVariableErrors; on HTTP the Apollo plugin below, on WebSocket ws-server.ts).
 *   The field is where the variable is used, and the message says which variable (`(got 1.5 in
 *   $input.priority)`, `(in $input.schedule.at)`). HTTP 400, as graphql-js's variable errors are.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { HeaderMap } from "@apollo/server";
import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isInputType,
  isListType,
  Kind,
  print,
  coerceInputValue,
  typeFromAST,
  type ArgumentNode,
  type ASTNode,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ObjectFieldNode,
  type OperationDefinitionNode,
  type ValidationRule,
  type ValueNode,
} from "graphql";
import { INT_MAX, INT_MIN, intRangeText } from "../resolvers/index.js";
import { DateTime, dateTimeLiteralProblem, JSONObject } from "../schema/index.js";
import { badDateTime } from "../timing/index.js";
import { descend, positionAt, variablePositions, type InputPosition } from "./input-positions.js";

/** BAD_USER_INPUT for a value of a checked scalar that is none, with `extensions.field`. */
export class ScalarInputError extends GraphQLError {
  constructor(position: InputPosition, fallbackName: string, problem: string, node: ASTNode) {
    const field = position.names.join(".") || fallbackName;
    super(`${field}: ${problem}`, { nodes: node, extensions: { code: "BAD_USER_INPUT", field } });
  }
}

/** What was given: a literal of the document, or a variable's value (`where`: `in $n`, `as the default of $n`). */
type Given = { literal: ValueNode; where?: string } | { value: unknown; where: string };

interface ScalarCheck {
  /** Whether a literal (no variable, no null, no list) is refused. */
  refuses(node: ValueNode): boolean;
  /** A valid literal, what the rest of the validation sees in place of a refused one. */
  placeholder: ValueNode;
  /** What is wrong with `given` at the position of schema coordinate `coordinate`, and what is allowed. */
  problem(coordinate: string | null, given: Given): string;
}

const gotText = (given: Given): string => ("literal" in given ? shown(print(given.literal)) : showValue(given.value)) + (given.where ? ` ${given.where}` : "");

const IntCheck: ScalarCheck = {
  refuses: (node) => node.kind !== Kind.INT || !(Number(node.value) >= INT_MIN && Number(node.value) <= INT_MAX),
  placeholder: { kind: Kind.INT, value: "0" },
  problem: (coordinate, given) => `must be ${intRangeText(coordinate)} (got ${gotText(given)})`,
};

const DateTimeCheck: ScalarCheck = {
  refuses: (node) => dateTimeLiteralProblem(node) !== null,
  placeholder: { kind: Kind.STRING, value: "1970-01-01T00:00:00Z" },
  problem: (_coordinate, given) =>
    ("literal" in given ? dateTimeLiteralProblem(given.literal)! : badDateTime(given.value instanceof Date ? "an invalid Date" : given.value)) + (given.where ? ` (${given.where})` : ""),
};

const JSONObjectCheck: ScalarCheck = {
  refuses: (node) => node.kind !== Kind.OBJECT,
  placeholder: { kind: Kind.OBJECT, fields: [] },
  problem: (_coordinate, given) => `must be an object of names to values, such as {"DEBUG": "1"} (got ${gotText(given)})`,
};

/** The scalars whose refused values are told apart, by name. */
const CHECKED = new Map<string, ScalarCheck>([
  ["Int", IntCheck],
  [DateTime.name, DateTimeCheck],
  [JSONObject.name, JSONObjectCheck],
]);

const checkOf = (type: GraphQLInputType | null | undefined): ScalarCheck | undefined => (type ? CHECKED.get(getNamedType(type).name) : undefined);

/** A value as the message shows it: at most 40 characters of it. */
function shown(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
}

/** The literals at a position of `type` (a list of them for a list type) that `check` refuses. */
function refusedIn(value: ValueNode, type: GraphQLInputType, check: ScalarCheck): ValueNode[] {
  if (value.kind === Kind.VARIABLE || value.kind === Kind.NULL) return [];
  const t = getNullableType(type);
  if (isListType(t)) return value.kind === Kind.LIST ? value.values.flatMap((v) => refusedIn(v, t.ofType, check)) : refusedIn(value, t.ofType, check);
  return check.refuses(value) ? [value] : [];
}

/** The value with a valid one in place of each refused one: what the rest of the validation sees. */
function withPlaceholders(value: ValueNode, type: GraphQLInputType, refused: ReadonlySet<ValueNode>, check: ScalarCheck): ValueNode {
  const t = getNullableType(type);
  if (isListType(t) && value.kind === Kind.LIST) return { ...value, values: value.values.map((v) => withPlaceholders(v, t.ofType, refused, check)) };
  return refused.has(value) ? ({ ...check.placeholder, loc: value.loc } as ValueNode) : value;
}

export const scalarLiterals: ValidationRule = (context) => {
  const schema = context.getSchema();
  const visit = <N extends ArgumentNode | ObjectFieldNode>(node: N, ancestors: ReadonlyArray<ASTNode | ReadonlyArray<ASTNode>>): N | undefined => {
    const type = context.getInputType();
    const check = checkOf(type);
    if (!type || !check) return undefined;
    const refused = refusedIn(node.value, type, check);
    if (refused.length === 0) return undefined;
    const position = positionAt(schema, context, ancestors, node);
    for (const v of refused) context.reportError(new ScalarInputError(position, node.name.value, check.problem(position.coordinate, { literal: v }), v));
    return { ...node, value: withPlaceholders(node.value, type, new Set(refused), check) };
  };
  return {
    Argument: (node, _key, _parent, _path, ancestors) => visit(node, ancestors),
    ObjectField: (node, _key, _parent, _path, ancestors) => visit(node, ancestors),
    // `$n: Int = 1.5`: named where the variable is used.
    VariableDefinition(node, _key, _parent, _path, ancestors) {
      const type = context.getInputType();
      const check = checkOf(type);
      if (!node.defaultValue || !type || !check) return undefined;
      const refused = refusedIn(node.defaultValue, type, check);
      const operation = ancestors.find((a): a is OperationDefinitionNode => !Array.isArray(a) && (a as ASTNode).kind === Kind.OPERATION_DEFINITION);
      if (refused.length === 0 || !operation) return undefined;
      const name = node.variable.name.value;
      const uses = variablePositions(schema, context.getDocument(), operation).get(name) ?? [{ names: [], coordinate: null, type }];
      for (const use of uses) {
        for (const v of refused) context.reportError(new ScalarInputError(use, `$${name}`, check.problem(use.coordinate, { literal: v, where: `as the default of $${name}` }), v));
      }
      return { ...node, defaultValue: withPlaceholders(node.defaultValue, type, new Set(refused), check) };
    },
  };
};

function showValue(v: unknown): string {
  let text: string;
  try {
    // A JSON number too large for a double (1e400) is read as Infinity, which JSON.stringify prints as null.
    text = typeof v === "number" && !Number.isFinite(v) ? "a number beyond what a double holds" : (JSON.stringify(v) ?? String(v));
  } catch {
    text = String(v);
  }
  return shown(text);
}

/** `$input.retry.nonRetryableExitCodes[1]`. */
function variablePath(name: string, path: ReadonlyArray<string | number>): string {
  return `$${name}${path.map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("")}`;
}

/**
 * The variables of a checked scalar (or such values inside input-object and list variables) of the
 * request that are none, each named where it is used; empty when there are none. Other variable
 * problems are left to graphql-js's coercion at execution.
 */
export function scalarVariableErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode | null | undefined,
  inputs: Record<string, unknown> | null | undefined,
): GraphQLError[] {
  if (!operation || !inputs) return [];
  let uses: Map<string, InputPosition[]> | undefined;
  const errors = new Map<string, GraphQLError>();
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (!Object.prototype.hasOwnProperty.call(inputs, name)) continue;
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type)) continue;
    coerceInputValue(inputs[name], type, (path, invalid) => {
      if (invalid == null) return;
      const inner = descend(type, null, path);
      const check = checkOf(inner.type);
      if (!check) return;
      uses ??= variablePositions(schema, document, operation);
      for (const use of uses.get(name) ?? [{ names: [], coordinate: null, type }]) {
        const position = { names: [...use.names, ...inner.names], coordinate: inner.coordinate ?? use.coordinate, type: inner.type };
        const where = `in ${variablePath(name, path)}`;
        const e = new ScalarInputError(position, variablePath(name, path), check.problem(position.coordinate, { value: invalid, where }), definition);
        errors.set(e.message, e);
      }
    });
  }
  return [...errors.values()];
}

/**
 * Apollo: refuses a request whose variables of a checked scalar are none before it is executed
 * (HTTP 400, every such variable named), instead of graphql-js's coercion messages.
 */
export function scalarVariablesPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    requestDidStart: async () => ({
      responseForOperation: async ({ schema, document, operation, request }) => {
        const errors = scalarVariableErrors(schema, document, operation, request.variables);
        if (errors.length === 0) return null;
        return { http: { status: 400, headers: new HeaderMap() }, body: { kind: "single", singleResult: { errors: errors.map((e) => e.toJSON()) } } };
      },
    }),
  };
}

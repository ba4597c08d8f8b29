/**
 * An Int the API takes that is no 32-bit integer at all (`first: 1.5`, `1e10`, `"abc"`,
 * `99999999999`) is refused as BAD_USER_INPUT naming its field and what the field allows,
 * `first: must be an integer from 1 to 100 (got 1e10)`, instead of graphql-js's "Int cannot
 * represent non-integer value: 1e10", which names neither. The ranges are resolvers/int-ranges.ts.
 *
 * - Written in the document: a validation rule (intLiterals), which, as api/date-time-literals.ts
 *   does, reports the value on entering its argument or input field and hands the rest of the pass
 *   a copy with a valid Int in its place, so graphql-js's ValuesOfCorrectType does not say it again.
 *   Apollo gives every validation error GRAPHQL_VALIDATION_FAILED; api/server.ts's formatError
 *   gives these their own code back. The document is refused whole, HTTP 400.
 * - In a variable: checked once the operation is known, before execution runs graphql-js's own
 *   coercion (intVariableErrors; on HTTP the Apollo plugin below, on WebSocket ws-server.ts). The
 *   field is where the variable is used, and the message says which variable (`(got 1.5 in
 *   $input.priority)`). HTTP 400, as graphql-js's variable errors are.
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
import { descend, positionAt, variablePositions, type InputPosition } from "./input-positions.js";

/** BAD_USER_INPUT for an Int input that is no 32-bit integer, with `extensions.field`. */
export class IntInputError extends GraphQLError {
  constructor(position: InputPosition, fallbackName: string, got: string, node: ASTNode) {
    const field = position.names.join(".") || fallbackName;
    super(`${field}: must be ${intRangeText(position.coordinate)} (got ${got})`, { nodes: node, extensions: { code: "BAD_USER_INPUT", field } });
  }
}

const isInt = (type: GraphQLInputType | null | undefined): boolean => !!type && getNamedType(type).name === "Int";

/** A value as the message shows it: at most 40 characters of it. */
function shown(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
}

/** The literals at an Int position (a list of them for [Int]) that are no 32-bit integer. */
function notInts(value: ValueNode, type: GraphQLInputType): ValueNode[] {
  if (value.kind === Kind.VARIABLE || value.kind === Kind.NULL) return [];
  const t = getNullableType(type);
  if (isListType(t)) return value.kind === Kind.LIST ? value.values.flatMap((v) => notInts(v, t.ofType)) : notInts(value, t.ofType);
  if (value.kind !== Kind.INT) return [value];
  const n = Number(value.value);
  return n >= INT_MIN && n <= INT_MAX ? [] : [value];
}

/** The value with a valid Int in place of each refused one: what the rest of the validation sees. */
function withPlaceholders(value: ValueNode, type: GraphQLInputType, refused: ReadonlySet<ValueNode>): ValueNode {
  const t = getNullableType(type);
  if (isListType(t) && value.kind === Kind.LIST) return { ...value, values: value.values.map((v) => withPlaceholders(v, t.ofType, refused)) };
  return refused.has(value) ? { kind: Kind.INT, value: "0", loc: value.loc } : value;
}

export const intLiterals: ValidationRule = (context) => {
  const schema = context.getSchema();
  const check = <N extends ArgumentNode | ObjectFieldNode>(node: N, ancestors: ReadonlyArray<ASTNode | ReadonlyArray<ASTNode>>): N | undefined => {
    const type = context.getInputType();
    if (!type || !isInt(type)) return undefined;
    const refused = notInts(node.value, type);
    if (refused.length === 0) return undefined;
    const position = positionAt(schema, context, ancestors, node);
    for (const v of refused) context.reportError(new IntInputError(position, node.name.value, shown(print(v)), v));
    return { ...node, value: withPlaceholders(node.value, type, new Set(refused)) };
  };
  return {
    Argument: (node, _key, _parent, _path, ancestors) => check(node, ancestors),
    ObjectField: (node, _key, _parent, _path, ancestors) => check(node, ancestors),
    // `$n: Int = 1.5`: named where the variable is used.
    VariableDefinition(node, _key, _parent, _path, ancestors) {
      const type = context.getInputType();
      if (!node.defaultValue || !type || !isInt(type)) return undefined;
      const refused = notInts(node.defaultValue, type);
      const operation = ancestors.find((a): a is OperationDefinitionNode => !Array.isArray(a) && (a as ASTNode).kind === Kind.OPERATION_DEFINITION);
      if (refused.length === 0 || !operation) return undefined;
      const name = node.variable.name.value;
      const uses = variablePositions(schema, context.getDocument(), operation).get(name) ?? [{ names: [], coordinate: null, type }];
      for (const use of uses) for (const v of refused) context.reportError(new IntInputError(use, `$${name}`, `${shown(print(v))} as the default of $${name}`, v));
      return { ...node, defaultValue: withPlaceholders(node.defaultValue, type, new Set(refused)) };
    },
  };
};

function showValue(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
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
 * The Int variables (or Ints inside input-object and list variables) of the request that are no
 * 32-bit integer, each named where it is used; empty when there are none. Other variable problems
 * are left to graphql-js's coercion at execution.
 */
export function intVariableErrors(
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
      if (!isInt(inner.type)) return;
      uses ??= variablePositions(schema, document, operation);
      for (const use of uses.get(name) ?? [{ names: [], coordinate: null, type }]) {
        const position = { names: [...use.names, ...inner.names], coordinate: inner.coordinate ?? use.coordinate, type: inner.type };
        const e = new IntInputError(position, variablePath(name, path), `${showValue(invalid)} in ${variablePath(name, path)}`, definition);
        errors.set(e.message, e);
      }
    });
  }
  return [...errors.values()];
}

/**
 * Apollo: refuses a request whose Int variables are no 32-bit integers before it is executed
 * (HTTP 400, every such variable named), instead of graphql-js's coercion messages.
 */
export function intVariablesPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    requestDidStart: async () => ({
      responseForOperation: async ({ schema, document, operation, request }) => {
        const errors = intVariableErrors(schema, document, operation, request.variables);
        if (errors.length === 0) return null;
        return { http: { status: 400, headers: new HeaderMap() }, body: { kind: "single", singleResult: { errors: errors.map((e) => e.toJSON()) } } };
      },
    }),
  };
}

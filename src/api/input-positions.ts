/**
 * Where a value sits in a GraphQL document, as the API's input errors name it: the field path from
 * the argument down (`createJob(input: {schedule: {maxFires: 2}})` → `schedule.maxFires`; an
 * argument named `input` is left out, as the API's own input errors name their fields) and the
 * schema coordinate of the argument or input field that takes it (`ScheduleInput.maxFires`,
 * `Query.jobs(first:)`), which says what it allows.
 */
import {
  getNamedType,
  isInputObjectType,
  isInputType,
  Kind,
  TypeInfo,
  typeFromAST,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type VariableDefinitionNode,
  type VariableNode,
} from "graphql";

export interface InputPosition {
  /** `schedule.maxFires`; empty for a value that is the whole `input` argument. */
  names: string[];
  /** `ScheduleInput.maxFires`, `Query.jobs(first:)`; null where the schema has no such place. */
  coordinate: string | null;
  /** The type the position takes. */
  type: GraphQLInputType | null;
}

/** What TypeInfo (or a ValidationContext) knows at the node being visited. */
type TypeState = Pick<TypeInfo, "getArgument" | "getFieldDef" | "getParentType" | "getDirective">;

/** The argument and input fields enclosing a node (the node included), outermost first. */
function enclosing(ancestors: ReadonlyArray<ASTNode | ReadonlyArray<ASTNode>>, node: ASTNode): string[] {
  const names: string[] = [];
  for (const a of [...ancestors, node]) {
    if (Array.isArray(a)) continue;
    const n = a as ASTNode;
    if (n.kind === Kind.VARIABLE_DEFINITION) names.length = 0;
    if (n.kind === Kind.ARGUMENT || n.kind === Kind.OBJECT_FIELD) names.push(n.name.value);
  }
  return names;
}

/**
 * The input fields `names` lead to from `type`, whose coordinate is `coordinate`: the innermost
 * one's coordinate and type (numbers in a path, list indexes, are passed over).
 */
export function descend(type: GraphQLInputType | null, coordinate: string | null, names: ReadonlyArray<string | number>): InputPosition {
  let at: GraphQLInputType | null = type;
  let coord = coordinate;
  const shown: string[] = [];
  for (const name of names) {
    if (typeof name === "number") continue;
    shown.push(name);
    const named = at ? getNamedType(at) : null;
    const field = named && isInputObjectType(named) ? named.getFields()[name] : undefined;
    at = field?.type ?? null;
    coord = field && named ? `${named.name}.${name}` : null;
  }
  return { names: shown, coordinate: coord, type: at };
}

/**
 * The position of the value being entered (an argument, an input field, or a value inside one).
 * Inside a variable's default value, the names start at the variable (and a default that is the
 * whole value has no coordinate: the variable's uses say where it goes).
 */
export function positionAt(schema: GraphQLSchema, state: TypeState, ancestors: ReadonlyArray<ASTNode | ReadonlyArray<ASTNode>>, node: ASTNode): InputPosition {
  const names = enclosing(ancestors, node);
  const definition = ancestors.find((a): a is VariableDefinitionNode => !Array.isArray(a) && (a as ASTNode).kind === Kind.VARIABLE_DEFINITION);
  if (definition) {
    const type = typeFromAST(schema, definition.type);
    return descend(type && isInputType(type) ? type : null, null, names);
  }
  const argument = state.getArgument();
  if (!argument) return { names, coordinate: null, type: null };
  const field = state.getFieldDef();
  const parent = state.getParentType();
  const root = state.getDirective() ? `@${state.getDirective()!.name}(${argument.name}:)` : field && parent ? `${parent.name}.${field.name}(${argument.name}:)` : null;
  const inner = descend(argument.type, root, names.slice(1));
  return { ...inner, names: argument.name === "input" ? inner.names : [argument.name, ...inner.names] };
}

/** The fragments an operation spreads, directly or through other fragments. */
function fragmentsOf(document: DocumentNode, operation: OperationDefinitionNode): FragmentDefinitionNode[] {
  const byName = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const seen = new Map<string, FragmentDefinitionNode>();
  const pending: ASTNode[] = [operation];
  while (pending.length > 0) {
    visit(pending.pop()!, {
      FragmentSpread(spread) {
        const f = byName.get(spread.name.value);
        if (f && !seen.has(f.name.value)) {
          seen.set(f.name.value, f);
          pending.push(f);
        }
      },
    });
  }
  return [...seen.values()];
}

/** Where each variable of the operation is used: its positions, by variable name. */
export function variablePositions(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): Map<string, InputPosition[]> {
  const uses = new Map<string, InputPosition[]>();
  for (const definition of [operation, ...fragmentsOf(document, operation)]) {
    const typeInfo = new TypeInfo(schema);
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        VariableDefinition: () => false,
        Variable(node: VariableNode, _key, parent, _path, ancestors) {
          const name = node.name.value;
          // graphql-js's ancestors stop before the parent: the argument or input field that holds the variable.
          const above = parent && !Array.isArray(parent) ? [...ancestors, parent as ASTNode] : ancestors;
          uses.set(name, [...(uses.get(name) ?? []), positionAt(schema, typeInfo, above, node)]);
        },
      }),
    );
  }
  return uses;
}

/**
 * A DateTime written in the document (`at: "tomorrow"`) is refused naming its field:
 * `schedule.at: "tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as
 * "2030-01-01T09:00:00Z" …`. graphql-js's own rule (ValuesOfCorrectType) knows the value's type
 * but not the field it is for, so this rule, which runs in the same pass, reports such a value on
 * entering its field and hands the pass a copy of the field with a valid value in its place: the
 * other rules check that copy, and nothing is reported twice. The path is the field's, from the argument down
 * (`createJob(input: {schedule: {at}})` → `schedule.at`: an argument named `input` is left out,
 * as the API's own input errors name their fields).
 */
import { getNamedType, GraphQLError, Kind, type ArgumentNode, type ASTVisitor, type ObjectFieldNode, type ValidationContext, type ValidationRule } from "graphql";
import { DateTime, dateTimeLiteralProblem } from "../schema/index.js";

export const dateTimeLiterals: ValidationRule = (context: ValidationContext): ASTVisitor => {
  const path: string[] = [];
  /** The node, or a copy holding a valid date-time in place of a refused one (reported here). */
  const enter = <N extends ArgumentNode | ObjectFieldNode>(node: N, name: string): N | undefined => {
    path.push(name);
    const type = context.getInputType();
    if (!type || getNamedType(type) !== DateTime || node.value.kind === Kind.VARIABLE || node.value.kind === Kind.NULL) return undefined;
    const problem = dateTimeLiteralProblem(node.value);
    if (!problem) return undefined;
    const field = path.filter(Boolean).join(".");
    context.reportError(new GraphQLError(`${field}: ${problem}`, { nodes: node.value, extensions: { field } }));
    // The rest of the pass, every rule, sees a valid value instead: graphql-js's ValuesOfCorrectType
    // would say it again without the field (the document is refused either way).
    return { ...node, value: { kind: Kind.STRING, value: PLACEHOLDER, loc: node.value.loc } };
  };
  const leave = () => void path.pop();
  return {
    Argument: { enter: (node) => enter(node, node.name.value === "input" ? "" : node.name.value), leave },
    ObjectField: { enter: (node) => enter(node, node.name.value), leave },
  };
};

/** Any valid date-time: stands in for a refused one for the rest of the validation. */
const PLACEHOLDER = "1970-01-01T00:00:00Z";

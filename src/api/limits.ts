/**
 * Query limits: what a GraphQL document must pass before any resolver runs, the same on HTTP
 * (Apollo) and on WebSocket (graphql-ws). All of it is cheap next to executing the operation:
 *
 * 1. tokens — graphql-js stops parsing past `maxTokens` (GRAPHQL_PARSE_FAILED), so nothing
 *    later ever sees a huge document;
 * 2. depth, aliases, directives — graphql-armor validation rules; introspection refused by
 *    graphql-js's NoSchemaIntrospectionCustomRule when it is off (GRAPHQL_VALIDATION_FAILED).
 *    They run first, as one gate rule: at the document's root it runs them (each one linear
 *    walk) and, when one refuses, reports the refusals and ends the validation walk there, so
 *    graphql-js's specified rules — several milliseconds on a deeply nested document, the
 *    overlapping-fields check above all — never spend anything on a refused document;
 * 3. cost — graphql-query-complexity with the model in ./cost.ts, with the request's variables,
 *    against `maxCost` (queries, mutations) or `maxSubscriptionCost` (GRAPHQL_VALIDATION_FAILED).
 *
 * A refusal names the limit, its setting and its value in the message and carries
 * `extensions.limit` and `extensions.max` (cost refusals also `extensions.cost`).
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { maxDirectivesRule } from "@escape.tech/graphql-armor-max-directives";
import {
  getEnterLeaveForKind,
  getOperationAST,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationTypeNode,
  type ParseOptions,
  TypeInfo,
  ValidationContext,
  type ValidationRule,
} from "graphql";
import type { QueryLimitSettings } from "./settings.js";
import { operationCost } from "./cost.js";
import { scalarLiterals } from "./scalar-inputs.js";

export const VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED";
export const PARSE_FAILED = "GRAPHQL_PARSE_FAILED";

/** Refusal of a document by a named limit. */
function limitError(limit: string, setting: string, max: number, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(`${message} (${setting}=${max})`, {
    extensions: { code: VALIDATION_FAILED, limit, max, ...extra },
  });
}

/** graphql-armor reports "Syntax Error: <what>. " through this hook; we report it as a named limit. */
function reportAs(limit: string, setting: string, max: number) {
  return (context: ValidationContext | null, err: GraphQLError) => {
    context?.reportError(limitError(limit, setting, max, err.message.replace(/^Syntax Error: /, "").replace(/\.$/, "")));
  };
}

/**
 * Field suggestions ("Did you mean …?") leak the schema. Apollo removes them on HTTP with its
 * `hideSchemaDetailsFromClientErrors` option; this is the same edit (same pattern) for graphql-ws.
 */
function withoutSuggestions(e: GraphQLError): GraphQLError {
  const message = e.message.replace(/ ?Did you mean(.+?)\?$/, "");
  return message === e.message ? e : new GraphQLError(message, { nodes: e.nodes, extensions: e.extensions });
}

export class QueryLimits {
  /** For graphql-js `parse` (Apollo's `parseOptions`). */
  readonly parseOptions: ParseOptions;
  /**
   * To add to graphql-js's specified rules on both transports: the gate (see {@link gate}), then
   * Int, DateTime and JSONObject literals refused naming their field (scalar-inputs.ts; last: it
   * hands the pass a copy of the node it refuses, and a rule after one that does is not called on
   * entering that node).
   */
  readonly validationRules: ValidationRule[];
  /** graphql-armor's rules: each acts once per operation, following fragments itself. */
  private readonly operationRules: ValidationRule[];

  constructor(
    private readonly schema: GraphQLSchema,
    readonly settings: QueryLimitSettings,
  ) {
    const s = settings;
    this.parseOptions = { maxTokens: s.maxTokens };
    const common = { exposeLimits: true, propagateOnRejection: false };
    this.operationRules = [
      maxDepthRule({ ...common, n: s.maxDepth, onReject: [reportAs("maxDepth", "KAIROS_MAX_DEPTH", s.maxDepth)] }),
      maxAliasesRule({ ...common, n: s.maxAliases, onReject: [reportAs("maxAliases", "KAIROS_MAX_ALIASES", s.maxAliases)] }),
      maxDirectivesRule({ ...common, n: s.maxDirectives, onReject: [reportAs("maxDirectives", "KAIROS_MAX_DIRECTIVES", s.maxDirectives)] }),
    ];
    // After the gate: a refused document is not walked for anything else.
    this.validationRules = [this.gate, scalarLiterals];
  }

  /**
   * A validation rule that, on entering the document, runs the limit rules over it alone; when
   * they refuse it, it reports their errors and returns null, which graphql-js's visitor takes
   * as "replace the root and do not descend": every other rule in the same validation (the
   * specified rules, in parallel) stops there too.
   */
  private readonly gate: ValidationRule = (context) => ({
    Document: {
      enter: (document) => {
        const refused = this.refusals(document);
        if (refused.length === 0) return undefined;
        for (const e of refused) context.reportError(e);
        return null;
      },
    },
  });

  /** What the limit rules refuse in a parsed document; empty when it is within them. */
  refusals(document: DocumentNode): readonly GraphQLError[] {
    const errors: GraphQLError[] = [];
    const context = new ValidationContext(this.schema, document, new TypeInfo(this.schema), (e) => errors.push(e));
    // The armor rules do all their work on entering an operation: call them there rather than
    // walk every node of the document for them (the walk was most of a refusal's cost).
    const visitors = this.operationRules.map((rule) => rule(context));
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      for (const visitor of visitors) getEnterLeaveForKind(visitor, Kind.OPERATION_DEFINITION).enter?.call(visitor, definition, undefined, undefined, [], []);
    }
    if (errors.length > 0 || this.settings.introspection) return errors;
    return validate(this.schema, document, [NoSchemaIntrospectionCustomRule]);
  }

  /**
   * The refusal of a validated operation whose cost is over its maximum, or null. Variables that
   * cannot be coerced are left to execution, which refuses them as BAD_USER_INPUT.
   */
  costError(document: DocumentNode, kind: OperationTypeNode, variables: Record<string, unknown> | undefined, operationName?: string | null): GraphQLError | null {
    const subscription = kind === "subscription";
    const max = subscription ? this.settings.maxSubscriptionCost : this.settings.maxCost;
    const setting = subscription ? "KAIROS_MAX_SUBSCRIPTION_COST" : "KAIROS_MAX_COST";
    let cost: number;
    try {
      cost = operationCost(this.schema, document, variables, operationName);
    } catch (e) {
      if (e instanceof GraphQLError && e.message.startsWith('Variable "$')) return null;
      return limitError("cost", setting, max, `The cost of this operation cannot be computed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (cost <= max) return null;
    const what = subscription ? "Subscription" : "Operation";
    return limitError("cost", setting, max, `${what} cost limit of ${max} exceeded, found ${cost}`, { cost });
  }

  /**
   * Apollo: the cost check once the operation is known (after validation, with the request's
   * variables), before execution; a refusal is HTTP 400 like a validation error.
   */
  apolloPlugin<T extends object>(): ApolloServerPlugin<T> {
    return {
      requestDidStart: async () => ({
        didResolveOperation: async ({ document, operation, request }) => {
          if (!operation) return;
          const err = this.costError(document, operation.operation, request.variables, operation.name?.value);
          if (err) throw new GraphQLError(err.message, { extensions: { ...err.extensions, http: { status: 400 } } });
        },
      }),
    };
  }

  /**
   * Parse, validate and cost a document for a transport that does its own (graphql-ws): the
   * document, or the errors to answer with.
   */
  check(query: string, variables: Record<string, unknown> | undefined, operationName?: string | null): { document: DocumentNode } | GraphQLError[] {
    let document: DocumentNode;
    try {
      document = parse(query, this.parseOptions);
    } catch (e) {
      const err = e instanceof GraphQLError ? e : new GraphQLError(String(e));
      return [new GraphQLError(err.message, { extensions: { ...err.extensions, code: PARSE_FAILED } })];
    }
    const errors = validate(this.schema, document, [...specifiedRules, ...this.validationRules]);
    if (errors.length > 0) {
      return errors.map((e) => {
        const shown = this.settings.fieldSuggestions ? e : withoutSuggestions(e);
        return new GraphQLError(shown.message, { nodes: shown.nodes, extensions: { code: VALIDATION_FAILED, ...shown.extensions } });
      });
    }
    const operation = getOperationAST(document, operationName);
    if (!operation) return [new GraphQLError("Unable to identify operation", { extensions: { code: VALIDATION_FAILED } })];
    const costly = this.costError(document, operation.operation, variables, operation.name?.value);
    return costly ? [costly] : { document };
  }
}

/**
 * The guards both transports apply before any resolver runs: who the caller is (a JWT or an API
 * key), the caller's request budget, and the penalty for a refused document.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { budgetKey, type Caller } from "../auth/index.js";
import { UnauthenticatedError } from "../domain/index.js";
import type { Context, Services } from "../resolvers/index.js";

export interface Authenticated {
  principal: Caller | null;
  authError: string | null;
}

/** A JWT or an API key, checked against the user's current state (Authenticator). */
export async function authenticate(services: Services, header: unknown): Promise<Authenticated> {
  if (typeof header !== "string" || header.trim() === "") return { principal: null, authError: null };
  try {
    return { principal: await services.auth.fromHeader(header), authError: null };
  } catch (e) {
    if (e instanceof UnauthenticatedError) return { principal: null, authError: e.message };
    throw e;
  }
}

/** Codes of a document the API refused before running anything: unparsable, invalid, or over a query limit. */
const REFUSED_CODES = new Set(["GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED"]);

/** A refused document costs its sender `refusedCost` requests of its budget in all (one already taken). */
export async function chargeRefusal(services: Services, principal: Caller | null, address: string): Promise<void> {
  const { key } = budgetKey(principal, address);
  await services.limits.requests.charge(key, services.limits.refusedCost - 1);
}

/** Apollo: charges the refusal penalty for a refused document (see KAIROS_RATE_REFUSED_COST). */
export function refusalPenaltyPlugin(services: Services): ApolloServerPlugin<Context> {
  return {
    requestDidStart: async () => ({
      didEncounterErrors: async ({ errors, contextValue }) => {
        if (errors.some((e) => REFUSED_CODES.has(String(e.extensions?.code)))) await chargeRefusal(services, contextValue.principal, contextValue.clientAddress);
      },
    }),
  };
}

/** Spends one request from the caller's budget; RateLimitedError when it is spent. */
export async function takeRequest(services: Services, principal: Caller | null, address: string): Promise<void> {
  const { key, who } = budgetKey(principal, address);
  await services.limits.requests.take(key, who);
}

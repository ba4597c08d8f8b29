/**
 * Requests refused for their inputs before they ran (test/api/int-inputs, scalar-inputs): HTTP 400,
 * no data, none of graphql-js's own wordings; each error as BAD_USER_INPUT naming its field.
 */
import { expect } from "vitest";
import { postGql } from "./http.js";

export type InputErr = { message: string; extensions?: Record<string, unknown> };

/** The errors of `query` refused before it ran, asked at `url` with `token`. */
export async function refusedInputs(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<InputErr[]> {
  const r = await postGql(url, query, { variables, token });
  expect(r.status, r.text).toBe(400);
  expect(r.json.data, r.text).toBeUndefined();
  expect(r.text).not.toMatch(/cannot represent|got invalid value|GRAPHQL_VALIDATION_FAILED/);
  return (r.json.errors as InputErr[]).map(({ message, extensions }) => ({ message, extensions }));
}

/** The error expected for `field`. */
export const badInput = (field: string, message: string): InputErr => ({ message, extensions: { code: "BAD_USER_INPUT", field } });

import { DateTimeResolver, JSONObjectResolver, JSONResolver } from "graphql-scalars";

/** ISO-8601 date-time with offset, e.g. 2026-11-21T10:00:00.000Z. */
export const DateTime = DateTimeResolver;
/** A JSON object (string values for environment maps). */
export const JSONObject = JSONObjectResolver;
/** Any JSON value (a DAG task's result). */
export const JSONValue = JSONResolver;

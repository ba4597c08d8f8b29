/**
 * The HTTP and WebSocket server of the `api` role (and of `dev`): Apollo on Express at `/graphql`,
 * graphql-ws on the same port, the guards both apply (query limits and cost, rate limits, body
 * size, client addresses: docs/limits.md), the HTTP error envelope (docs/api-errors.md), the
 * console's files, and `/metrics`, `/healthz`, `/readyz` (also served alone by the other roles).
 */
export * from "./settings.js";
export * from "./ops.js";
export * from "./server.js";

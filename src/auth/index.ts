/** Authentication and access: who the caller is (tokens, API keys, accounts), what they may see (access.ts), how often (rate-limit.ts). */
export * from "./access.js";
export * from "./accounts.js";
export * from "./api-keys.js";
export * from "./authenticator.js";
export * from "./parts.js";
export * from "./password-policy.js";
export * from "./passwords.js";
export type { LockoutDimension, LoginLockout } from "./login-lockouts.js";
export * from "./rate-limit.js";
export * from "./session-watch.js";
export * from "./tokens.js";

/** Configuration: what can be set (settings.ts), how it is read (load.ts, flags.ts), and the readers (parse.ts). */
export { ROLES, type KairosConfig, type Role } from "./settings.js";
export type { ApiGuardSettings, QueryLimitSettings } from "../api/index.js";
export type { LoginLimitSettings } from "../auth/index.js";
export { badPortReason, settingDuration, type Env, type Rate } from "./parse.js";
export { applyFlags, loadRoleConfig, ROLE_FLAGS } from "./flags.js";
export { loadConfig } from "./load.js";
export type { ArtifactSettings } from "./blobs.js";
export type { BlobStoreSettings } from "../blobs/index.js";

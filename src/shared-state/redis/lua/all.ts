/** Every Lua script of the Redis adapters; the loader registers exactly these. */
import { acquire } from "./acquire-2.js";
import { arm } from "./arm-3.js";
import { claimDue } from "./claimDue-5.js";
import { complete } from "./complete-5.js";
import { disarm } from "./disarm-3.js";
import { dropClaims } from "./dropClaims-1.js";
import { heartbeat } from "./heartbeat-1.js";
import { pushReady } from "./pushReady-9.js";
import { queued } from "./queued-2.js";
import { release } from "./release-1.js";
import { renew } from "./renew-2.js";
import { replayInflight } from "./replayInflight-5.js";
import { takeReady } from "./takeReady-10.js";
import { unready } from "./unready-9.js";
import type { LuaScript } from "./script.js";

export type { LuaScript } from "./script.js";
export const scripts = { acquire, arm, claimDue, complete, disarm, dropClaims, heartbeat, pushReady, queued, release, renew, replayInflight, takeReady, unready } as const;
export const allScripts: readonly LuaScript[] = Object.values(scripts);

/**
 * Moved to timing/staging.ts (pure). This re-export keeps src/core/jobs.ts compiling until its
 * import is switched at merge; nothing else should import it.
 */
export { canStage, DEFAULT_STAGE_AHEAD_MS, timerDueAt } from "./timing/staging.js";

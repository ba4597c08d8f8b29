/** Types of scripts/build-steps.mjs, for tests. */
import type { BuildOutput } from "./stale.mjs";
export const TSC_STEPS: Array<BuildOutput & { name: string; project: string }>;

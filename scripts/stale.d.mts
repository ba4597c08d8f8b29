/** Types of scripts/stale.mjs (plain JavaScript, run by npm before anything is compiled), for tests. */
export const root: string;
export const INSTALLED: string[];
export interface BuildOutput {
  /** The file whose modification time stands for the build (relative to the root, or absolute). */
  output: string;
  /** Files and folders whose change makes it stale. */
  inputs: string[];
  /** Paths under `inputs` that do not count. */
  exclude?: string[];
  /** Other outputs that must exist. */
  also?: string[];
}
export function staleReason(step: BuildOutput): string | null;
export function markBuilt(output: string, startedAtMs: number): void;
export function markFailed(output: string): void;

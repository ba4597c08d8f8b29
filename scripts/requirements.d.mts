/** Types of scripts/requirements.mjs (plain JavaScript: it runs before `npm ci`), for test/setup. */
export interface Requirement {
  /** A program looked up on PATH. */
  program?: string;
  /** Or a file: Chromium, at KAIROS_CHROMIUM or /usr/bin/chromium. */
  file?: string;
  /** The Debian package that brings it. */
  pkg: string;
  /** What needs it, for people. */
  neededBy: string;
}
export const REQUIREMENTS: readonly Requirement[];
export function missingRequirements(env?: NodeJS.ProcessEnv): Requirement[];
export function packagesFor(missing: readonly Requirement[]): string[];
export function describeMissing(missing: readonly Requirement[]): string;

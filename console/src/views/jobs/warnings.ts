/** createJob's warnings, carried from the editor to the new job's page (shown once). */
const pending = new Map<string, string[]>();

export function rememberWarnings(jobId: string, warnings: string[]): void {
  if (warnings.length > 0) pending.set(jobId, warnings);
}

export function takeWarnings(jobId: string): string[] {
  const w = pending.get(jobId) ?? [];
  pending.delete(jobId);
  return w;
}

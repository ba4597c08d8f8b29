/**
 * The abusive documents of issue #12, built once for the tests and the load test
 * (bench/api-abuse.ts).
 */

/** `jobs → runs → job → runs …` nested `levels` times, every list asking for 100 items. */
export function nestedJobsRuns(levels: number): string {
  let inner = "id";
  for (let i = 0; i < levels; i++) inner = `job { id runs(first: 100) { edges { node { id ${inner} } } } }`;
  return `{ jobs(first: 100) { edges { node { id runs(first: 100) { edges { node { ${inner} } } } } } } }`;
}

/** `count` aliases of `job(id) { nextFires(count: 100) { at } }`. */
export function manyAliases(count: number, jobId: string): string {
  const fields = Array.from({ length: count }, (_, i) => `a${i}: job(id: "${jobId}") { nextFires(count: 100) { at } }`);
  return `{ ${fields.join(" ")} }`;
}

/** A valid selection `levels` deep, the `__typename` leaf included: `job(id) { runs(first: 1) { edges { node { job { … { __typename } … }`. */
export function deepQuery(levels: number, jobId: string): string {
  const steps = ["runs(first: 1)", "edges", "node", "job"];
  const fields = [`job(id: "${jobId}")`];
  while (fields.length < levels - 1) fields.push(steps[(fields.length - 1) % steps.length]!);
  return `{ ${fields.join(" { ")} { __typename${" }".repeat(fields.length)} }`;
}

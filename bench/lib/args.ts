/** The value after `flag` on the command line (`--rounds 5` → "5"), or undefined when the flag is absent. */
export function argValue(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

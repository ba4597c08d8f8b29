/**
 * Refusals in the command line's own terms. The API names the argument or input field it refused
 * (`extensions.field`, and the message starts with it: `within: years and months have no fixed
 * length …`), and so does the server's schedule code run offline (ScheduleError.field); someone at
 * a shell typed a flag, `--within`, and should read that name.
 *
 * A command's options stand for API fields of the same name (`--within` fills `within`, `--pool`
 * `pool` or `filter.pool`); a command whose flags fill fields named otherwise declares them once,
 * beside its options (`fieldFlags(cmd, { hotspotFactor: "--factor", "filter.from": "--since" })`).
 * runCli rewrites every ApiError of the command that ran (flagTerms); a command that checks input
 * itself asks flagOf.
 */
import type { Command } from "commander";
import { ApiError } from "./client.js";

const declared = new WeakMap<Command, Readonly<Record<string, string>>>();

/** Declares the API fields `cmd`'s flags fill under other names: `{ hotspotMinRuns: "--min-runs" }`. */
export function fieldFlags<C extends Command>(cmd: C, fields: Readonly<Record<string, string>>): C {
  declared.set(cmd, { ...declared.get(cmd), ...fields });
  return cmd;
}

/** The flag of `cmd` that fills the API field `field`, if one does. */
export function flagOf(cmd: Command, field: string): string | undefined {
  const named = declared.get(cmd)?.[field];
  if (named) return named;
  // A filter's fields are the command's own flags by name (`filter.pool` is `--pool`).
  const own = field.startsWith("filter.") ? field.slice("filter.".length) : field;
  return cmd.options.find((o) => o.long && !o.negate && o.attributeName() === own)?.long;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * `e` naming flags instead of the API fields they filled: the field it is about at its start
 * (`within: …` → `--within: …`), and any other declared dotted field the message mentions
 * (`filter.to: must be after filter.from (…)` → `--until: must be after --since (…)`).
 */
export function flagTerms(e: unknown, cmd: Command | undefined): unknown {
  if (!(e instanceof ApiError) || !cmd) return e;
  let message = e.message;
  const flag = e.field ? flagOf(cmd, e.field) : undefined;
  if (e.field && flag && message.startsWith(`${e.field}: `)) message = `${flag}: ${message.slice(e.field.length + 2)}`;
  for (const [field, named] of Object.entries(declared.get(cmd) ?? {})) {
    if (field.includes(".")) message = message.replace(new RegExp(`(?<![\\w.-])${escape(field)}(?![\\w])`, "g"), named);
  }
  e.message = message;
  return e;
}

import type { Command } from "commander";

/** The examples block of a command's --help. */
export const example = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;

/** --server and --profile, on every command that talks to the API. */
export function connectionOptions(cmd: Command): Command {
  return cmd
    .option("--server <url>", "the Kairos server (default: KAIROS_SERVER, else the profile's)")
    .option("--profile <name>", "the stored login to use (default: KAIROS_PROFILE, else the last one logged in to)");
}

export const OUTPUT_FLAG = ["-o, --output <format>", "table, json or yaml", "table"] as const;

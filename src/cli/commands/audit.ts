/** `kairos audit`: the audit trail of mutations (yours; an administrator's: everyone's), and `--verify` of its hash chain. */
import type { Command } from "commander";
import { CliAuditLogDocument, CliVerifyAuditLogDocument, type AuditLogFilter, type CliAuditLogQuery } from "../../../generated/client/graphql.js";
import { parseDateTimeText, parseDuration, ScheduleError } from "../../timing/index.js";
import type { Ctx } from "../context.js";
import { CliError, EXIT } from "../errors.js";
import { emit, paint, parseFormat, relative, table } from "../output.js";
import { fieldFlags } from "../flag-names.js";
import { wholeNumberFlag } from "../numbers.js";
import { connectionOptions, example, OUTPUT_FLAG } from "./common.js";

/** An instant (2026-01-01T00:00:00Z) or a duration back from now (PT1H, P7D). */
export function instantOrAgo(flag: string, value: string, now: number): string {
  const v = value.trim();
  if (/^P/i.test(v)) {
    try {
      return new Date(now - parseDuration(v, flag)).toISOString();
    } catch (e) {
      // parseDuration was given the flag as its field: its message already starts with it.
      if (e instanceof ScheduleError) throw new CliError(`${flag}: ${e.detail}`);
      throw e;
    }
  }
  const at = parseDateTimeText(v);
  if ("error" in at) throw new CliError(`${flag}: ${at.error}, or a duration back from now such as PT1H or P7D`);
  return new Date(at.at).toISOString();
}

const list = (v: string | undefined) => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : undefined);

interface AuditOpts {
  action?: string;
  actor?: string;
  key?: string;
  target?: string;
  outcome?: string;
  since?: string;
  until?: string;
  limit: string;
  verify?: boolean;
  output: string;
}

/** The audit filter's fields the flags fill under other names (flag-names.ts): an API refusal names the flag. */
const FILTER_FLAGS = {
  "filter.actions": "--action",
  "filter.actorUserId": "--actor",
  "filter.actorApiKeyId": "--key",
  "filter.targetId": "--target",
  "filter.from": "--since",
  "filter.to": "--until",
};

export function registerAudit(program: Command, ctx: Ctx): void {
  const audit = connectionOptions(
    program
      .command("audit")
      .description("the audit trail of mutations, newest first: your calls (an administrator sees everyone's); --verify checks its hash chain (administrators)")
      .option("--action <names>", "only these mutations, separated by commas (createJob,deleteJob)")
      .option("--actor <userId>", "only calls by this user (administrators)")
      .option("--key <apiKeyId>", "only calls made with this API key")
      .option("--target <id>", "only calls that named or made this id (a job, run, DAG, user, key …)")
      .option("--outcome <code>", "OK, or an error code (FORBIDDEN, NOT_FOUND, BAD_USER_INPUT …)")
      .option("--since <when>", "an instant, or a duration back from now (PT1H, P7D)")
      .option("--until <when>", "an instant, or a duration back from now")
      .option("--limit <n>", "at most this many entries (1-10000)", "50")
      .option("--verify", "check the hash chain instead of listing: exits 1 when an entry was altered, removed or inserted")
      .option(...OUTPUT_FLAG),
  );
  fieldFlags(audit, FILTER_FLAGS)
    .addHelpText("after", example("kairos audit", "kairos audit --action deleteJob,updateJob --since P7D", "kairos audit --target 65f0c0ffee0123456789abcd -o json", "kairos audit --outcome FORBIDDEN --since PT1H", "kairos audit --verify"))
    .action(async (opts: AuditOpts) => {
      const format = parseFormat(opts.output);
      const api = await ctx.api();
      if (opts.verify) {
        const { verifyAuditLog: v } = await api.request(CliVerifyAuditLogDocument);
        emit(ctx.io, format, v, () =>
          v.ok
            ? `${paint(ctx.io, "green", "ok")}: ${v.checked} entries checked, from the anchor ${v.anchorSeq} to ${v.lastSeq} (last hash ${v.lastHash}); keyed since ${v.keyedSince ?? "-"}\n` +
              (v.unkeyedThrough > 0
                ? `${paint(ctx.io, "yellow", "note")}: entries up to ${v.unkeyedThrough} are unkeyed (written before the chain was keyed): whoever can write to the store could have rewritten them\n`
                : "")
            : `${paint(ctx.io, "red", v.broken!.problem)} at entry ${v.broken!.seq ?? "-"}: ${v.broken!.detail}\n`,
        );
        if (!v.ok) ctx.exitCode = EXIT.FAILED;
        return;
      }
      const limit = wholeNumberFlag("--limit", opts.limit, 1, 10_000);
      // An empty filter would match nothing (or be dropped): it is a mistake, so say which.
      const named: Array<[string, string | undefined]> = [["--action", opts.action], ["--actor", opts.actor], ["--key", opts.key], ["--target", opts.target], ["--outcome", opts.outcome], ["--since", opts.since], ["--until", opts.until]];
      for (const [flag, value] of named) {
        if (value !== undefined && value.trim() === "") throw new CliError(`${flag}: is empty; give a value, or leave ${flag} out for no filter`);
      }
      const now = ctx.io.now();
      const filter: AuditLogFilter = {
        actions: list(opts.action),
        actorUserId: opts.actor,
        actorApiKeyId: opts.key,
        targetId: opts.target,
        outcome: opts.outcome?.toUpperCase(),
        from: opts.since ? instantOrAgo("--since", opts.since, now) : undefined,
        to: opts.until ? instantOrAgo("--until", opts.until, now) : undefined,
      };
      const entries: Array<CliAuditLogQuery["auditLog"]["edges"][number]["node"]> = [];
      let after: string | null = null;
      while (entries.length < limit) {
        const { auditLog }: CliAuditLogQuery = await api.request(CliAuditLogDocument, { first: Math.min(100, limit - entries.length), after, filter });
        entries.push(...auditLog.edges.map((e) => e.node));
        if (!auditLog.pageInfo.hasNextPage) break;
        after = auditLog.pageInfo.endCursor ?? null;
      }
      emit(ctx.io, format, entries, () =>
        table(
          ["SEQ", "WHEN", "ACTOR", "ACTION", "OUTCOME", "TARGETS", "FROM"],
          entries.map((e) => [String(e.seq), relative(e.at, now), e.actor, e.action, paint(ctx.io, e.outcome === "OK" ? "green" : "red", e.outcome), e.targetIds.join(","), e.address]),
        ),
      );
    });
}

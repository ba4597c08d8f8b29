/** `kairos schedule` (offline), `kairos schema json`, `kairos completion bash|zsh`, `kairos why`. */
import type { Command } from "commander";
import { formatLocal, nextFires, normalizeSchedule, parseDateTimeText, ScheduleError, transitionsBetween, describeSchedule, type ScheduleInput } from "../../timing/index.js";
import type { Ctx } from "../context.js";
import { CliError } from "../errors.js";
import { jobFileSchema } from "../json-schema.js";
import { emit, paint, parseFormat } from "../output.js";
import { completionScript } from "../completion.js";
import { explain } from "../why.js";
import { fieldFlags, flagOf } from "../flag-names.js";
import { wholeNumberFlag } from "../numbers.js";
import { connectionOptions, example, OUTPUT_FLAG } from "./common.js";

const offsetText = (ms: number) => {
  const m = Math.round(ms / 60_000);
  const sign = m < 0 ? "-" : "+";
  const a = Math.abs(m);
  return `${sign}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
};

/** The schedule an expression stands for: an ISO duration is an interval, an instant a one-off, anything else cron. */
export function scheduleFromExpression(expr: string, tz: string | undefined, extra: Partial<ScheduleInput>): ScheduleInput {
  const e = expr.trim();
  const base = { ...(tz ? { timezone: tz } : {}), ...extra };
  if (/^P/i.test(e)) return { kind: "INTERVAL", every: e.toUpperCase(), ...base } as ScheduleInput;
  if (/^\d{4}-\d{2}-\d{2}([Tt ]|$)/.test(e)) {
    const at = parseDateTimeText(e);
    if ("error" in at) throw new CliError(`schedule: ${at.error}`);
    return { kind: "ONCE", at: at.at, ...base } as ScheduleInput;
  }
  return { kind: "CRON", cron: e, ...base } as ScheduleInput;
}

export function registerTools(program: Command, ctx: Ctx): void {
  // The schedule's fields the flags fill under other names (dstGap and dstRepeat are --dst-gap
  // and --dst-repeat by name): a refusal names the flag (flag-names.ts), not the API field.
  const preview = program.command("schedule");
  fieldFlags(preview, { timezone: "--tz", startAt: "--from" })
    .description("preview a schedule's next fires offline, with the server's own schedule code; DST changes are marked")
    .argument("<expression>", 'a cron expression ("0 9 * * MON-FRI"), an ISO-8601 interval (PT15M) or an instant (2030-01-01T09:00:00Z)')
    .option("--tz <zone>", "the IANA time zone the schedule runs in (default UTC)")
    .option("--next <n>", "how many fires (1-100)", "10")
    .option("--from <instant>", "preview from this instant instead of now")
    .option("--dst-gap <policy>", "SHIFT or SKIP: a wall time that does not exist on a spring-forward day")
    .option("--dst-repeat <policy>", "FIRST, LAST or BOTH: a wall time that happens twice on a fall-back day")
    .option(...OUTPUT_FLAG)
    .addHelpText("after", example('kairos schedule "0 9 * * MON-FRI" --tz Europe/Berlin --next 10', 'kairos schedule "30 2 * * *" --tz Europe/Berlin --from 2026-03-27T00:00:00Z --next 4', "kairos schedule PT6H -o json"))
    .action((expr: string, opts: { tz?: string; next: string; from?: string; dstGap?: string; dstRepeat?: string; output: string }, cmd: Command) => {
      const format = parseFormat(opts.output);
      const count = wholeNumberFlag("--next", opts.next, 1, 100);
      const given = opts.from ? parseDateTimeText(opts.from) : { at: ctx.io.now() };
      if ("error" in given) throw new CliError(`--from: ${given.error}`);
      const from = given.at;
      const input = scheduleFromExpression(expr, opts.tz, {
        ...(opts.dstGap ? { dstGap: opts.dstGap.toUpperCase() } : {}),
        ...(opts.dstRepeat ? { dstRepeat: opts.dstRepeat.toUpperCase() } : {}),
        ...(/^P/i.test(expr.trim()) ? { startAt: from } : {}),
      } as Partial<ScheduleInput>);
      let schedule;
      try {
        schedule = normalizeSchedule(input, from);
      } catch (e) {
        if (e instanceof ScheduleError) {
          const flag = flagOf(cmd, e.field);
          throw new CliError(flag ? `${flag}: ${e.detail}` : `schedule: ${e.message}`);
        }
        throw e;
      }
      const fires = nextFires(schedule, from - 1, count);
      const zone = schedule.timezone;
      let prev = from;
      const rows = fires.map((f) => {
        const changes = transitionsBetween(zone, prev, f.at + 1).map((t) => ({
          at: new Date(t.at).toISOString(),
          local: formatLocal(zone, t.at),
          from: offsetText(t.offsetBefore),
          to: offsetText(t.offsetAfter),
        }));
        prev = f.at + 1;
        return { at: f.utc, local: f.local, dst: f.dst ?? null, ...(f.nominal ? { nominal: f.nominal } : {}), dstChangeBefore: changes };
      });
      emit(ctx.io, format, { description: describeSchedule(schedule), timezone: zone, fires: rows }, () => {
        const lines = [`${describeSchedule(schedule)}`, ""];
        for (const r of rows) {
          for (const c of r.dstChangeBefore) lines.push(paint(ctx.io, "yellow", `  -- DST change ${c.at}: ${zone} goes from ${c.from} to ${c.to} --`));
          const note = r.dst === "GAP_SHIFTED" ? `  (DST gap: ${r.nominal ?? "the wall time"} does not exist, shifted)` : r.dst ? `  (DST: ${r.dst === "REPEATED_FIRST" ? "first of a repeated hour" : "second of a repeated hour"})` : "";
          lines.push(`  ${r.local.padEnd(26)} ${r.at}${paint(ctx.io, "yellow", note)}`);
        }
        return `${lines.join("\n")}\n`;
      });
    });

  const schema = program.command("schema").description("the JSON Schema of the files kairos apply reads");
  schema
    .command("json")
    .description("print the JSON Schema (draft-07) generated from the API's input types, for editors")
    .addHelpText("after", example("kairos schema json > schemas/kairos.schema.json", "# in a YAML file, for yaml-language-server:\n  # yaml-language-server: $schema=../schemas/kairos.schema.json"))
    .action(() => ctx.io.out(`${JSON.stringify(jobFileSchema(), null, 2)}\n`));

  program
    .command("completion")
    .description("print a shell completion script")
    .argument("<shell>", "bash or zsh")
    .addHelpText("after", example("source <(kairos completion bash)", "kairos completion zsh > \"${fpath[1]}/_kairos\""))
    .action((shell: string) => {
      if (shell !== "bash" && shell !== "zsh") throw new CliError(`completion: "${shell}" is not one of bash, zsh`);
      ctx.io.out(completionScript(program, shell));
    });

  connectionOptions(
    program
      .command("why")
      .description("why a run has not started, a job makes no runs, or a DAG run's tasks wait (the server's reasons: docs/waiting.md)")
      .argument("<ref>", "a run's id, or a job's name or id")
      .option(...OUTPUT_FLAG),
  )
    .addHelpText("after", example("kairos why nightly-report", "kairos why 6650c1f2e4b0a1b2c3d4e5f6 -o json   # {subject, kind, id, reasons: [{code, message, since, until}]}"))
    .action(async (ref: string, opts: { output: string }) => {
      const format = parseFormat(opts.output);
      const answer = await explain(ctx, ref);
      emit(ctx.io, format, answer, () => `${answer.subject}\n${answer.reasons.map((r) => `  - ${r.code}: ${r.message}`).join("\n")}\n`);
    });
}

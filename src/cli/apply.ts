/**
 * `kairos apply -f PATH`: converges the caller's jobs and DAGs to the files. Jobs and DAGs are
 * matched by name among the caller's own; what is missing is created, what differs is updated
 * (compare.ts decides), nothing is deleted unless --prune. --dry-run prints the plan and changes
 * nothing.
 */
import {
  CliCreateDagDocument,
  CliCreateJobDocument,
  CliDagDocument,
  CliDeleteDagDocument,
  CliDeleteJobDocument,
  CliPauseDagDocument,
  CliPauseJobDocument,
  CliResumeDagDocument,
  CliResumeJobDocument,
  CliUpdateDagDocument,
  CliUpdateJobDocument,
  type CreateDagInput,
  type CreateJobInput,
  type UpdateDagInput,
  type UpdateJobInput,
} from "../../generated/client/graphql.js";
import { ApiError } from "./client.js";
import { diffDag, diffJob, type FieldChange } from "./compare.js";
import type { Ctx } from "./context.js";
import { parseFieldPath, type LoadedDoc } from "./documents.js";
import { CliError, EXIT } from "./errors.js";
import { paint, type Io } from "./output.js";
import { listOwnDags, listOwnJobs } from "./resolve.js";

export interface PlannedChange {
  kind: "job" | "dag";
  name: string;
  id: string | null;
  action: "create" | "update" | "delete" | "unchanged";
  changes: FieldChange[];
  /** Where the document is, for create and update. */
  source: string | null;
  doc?: LoadedDoc;
}

export async function plan(ctx: Ctx, docs: LoadedDoc[], opts: { prune: boolean }): Promise<PlannedChange[]> {
  const api = await ctx.api();
  const now = ctx.io.now();
  const jobs = await listOwnJobs(ctx);
  const dags = await listOwnDags(ctx);
  const out: PlannedChange[] = [];
  for (const d of docs) {
    const source = d.at([]);
    if (d.kind === "job") {
      const same = jobs.filter((j) => j.name === d.name);
      if (same.length > 1) throw new CliError(`${source}: ${same.length} of your jobs are named "${d.name}" (${same.map((j) => j.id).join(", ")}); apply matches jobs by name: delete or rename the extra ones`);
      const job = same[0];
      if (!job) out.push({ kind: "job", name: d.name, id: null, action: "create", changes: [], source, doc: d });
      else {
        const changes = diffJob(d.input as CreateJobInput, job, now);
        out.push({ kind: "job", name: d.name, id: job.id, action: changes.length ? "update" : "unchanged", changes, source, doc: d });
      }
    } else {
      const head = dags.find((x) => x.name === d.name);
      if (!head) out.push({ kind: "dag", name: d.name, id: null, action: "create", changes: [], source, doc: d });
      else {
        const dag = (await api.request(CliDagDocument, { id: head.id })).dag;
        const changes = diffDag(d.input as CreateDagInput, dag, now);
        out.push({ kind: "dag", name: d.name, id: dag.id, action: changes.length ? "update" : "unchanged", changes, source, doc: d });
      }
    }
  }
  if (opts.prune) {
    const wanted = new Set(docs.map((d) => `${d.kind}:${d.name}`));
    for (const j of jobs) if (!wanted.has(`job:${j.name}`)) out.push({ kind: "job", name: j.name, id: j.id, action: "delete", changes: [], source: null });
    for (const d of dags) if (!wanted.has(`dag:${d.name}`)) out.push({ kind: "dag", name: d.name, id: d.id, action: "delete", changes: [], source: null });
  }
  return out;
}

const show = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v ?? null));

/** The plan for people: one line a job, its field changes under it when `detail`. */
export function renderPlan(io: Io, planned: PlannedChange[], detail: boolean): string {
  const lines: string[] = [];
  const label = (p: PlannedChange) => `${p.kind} ${p.name}`;
  for (const p of planned) {
    if (p.action === "unchanged") continue;
    if (p.action === "create") lines.push(paint(io, "green", `+ ${label(p)} (create, ${p.source})`));
    if (p.action === "delete") lines.push(paint(io, "red", `- ${label(p)} (delete, ${p.id})`));
    if (p.action === "update") {
      lines.push(paint(io, "yellow", `~ ${label(p)} (update: ${p.changes.length} field${p.changes.length === 1 ? "" : "s"})`));
      if (detail) {
        for (const c of p.changes) {
          if (c.change === "added") lines.push(paint(io, "green", `    + ${c.field}: ${c.to === undefined ? "(added)" : show(c.to)}`));
          if (c.change === "removed") lines.push(paint(io, "red", `    - ${c.field}${c.from === undefined ? "" : `: ${show(c.from)}`}`));
          if (c.change === "changed") lines.push(paint(io, "yellow", `    ~ ${c.field}: ${show(c.from)} -> ${show(c.to)}`));
        }
      }
    }
  }
  const unchanged = planned.filter((p) => p.action === "unchanged").length;
  const acting = planned.length - unchanged;
  if (acting === 0) lines.push(`no changes (${unchanged} up to date)`);
  else {
    const count = (a: PlannedChange["action"]) => planned.filter((p) => p.action === a).length;
    lines.push(`${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete, ${unchanged} unchanged`);
  }
  return `${lines.join("\n")}\n`;
}

function jobUpdate(input: CreateJobInput, changes: FieldChange[]): UpdateJobInput {
  const top = new Set(changes.map((c) => c.field.split(".")[0]!));
  const u: UpdateJobInput = {};
  if (top.has("description")) u.description = input.description ?? "";
  if (top.has("tags")) u.tags = input.tags ?? [];
  if (top.has("priority")) u.priority = input.priority ?? 5;
  if (top.has("misfire")) u.misfire = input.misfire ?? "FIRE_ONCE";
  if (top.has("overlap")) u.overlap = input.overlap ?? "ALLOW";
  if (top.has("catchupWindow")) u.catchupWindow = input.catchupWindow;
  if (top.has("schedule")) u.schedule = input.schedule;
  if (top.has("retry")) u.retry = input.retry ?? {};
  if (top.has("spec")) u.spec = input.spec;
  return u;
}

function dagUpdate(input: CreateDagInput, changes: FieldChange[]): UpdateDagInput {
  const top = new Set(changes.map((c) => c.field.split(".")[0]!));
  const u: UpdateDagInput = {};
  if (top.has("description")) u.description = input.description ?? "";
  if (top.has("failFast")) u.failFast = input.failFast ?? false;
  if (top.has("maxParallel")) u.maxParallel = input.maxParallel;
  if (top.has("misfire")) u.misfire = input.misfire ?? "FIRE_ONCE";
  if (top.has("overlap")) u.overlap = input.overlap ?? "ALLOW";
  if (top.has("params")) u.params = input.params ?? {};
  if (top.has("catchupWindow")) u.catchupWindow = input.catchupWindow;
  if (top.has("schedule")) {
    if (input.schedule) u.schedule = input.schedule;
    else u.clearSchedule = true;
  }
  if (top.has("tasks")) u.tasks = input.tasks;
  return u;
}

/** An API refusal of a document, placed at the field it names when the file has it. */
function placed(p: PlannedChange, e: unknown): string {
  if (!(e instanceof ApiError)) return `${p.source ?? `${p.kind} ${p.name}`}: ${(e as Error).message}`;
  const field = e.field;
  const where = field && p.doc ? p.doc.at(parseFieldPath(field)) : (p.source ?? `${p.kind} ${p.name}`);
  return `${where}: ${e.message}`;
}

/** Carries out a plan. Returns the problems (one line each); what succeeded is printed as it happens. */
export async function execute(ctx: Ctx, planned: PlannedChange[], opts: { toStderr?: boolean } = {}): Promise<string[]> {
  const api = await ctx.api();
  // With -o json|yaml (and under `kairos run`) stdout is for the data: what is done is said on stderr.
  const io = { out: opts.toStderr ? ctx.io.err : ctx.io.out, err: ctx.io.err };
  const problems: string[] = [];
  for (const p of planned) {
    if (p.action === "unchanged") continue;
    try {
      const paused = p.doc ? (p.doc.input as { paused?: boolean | null }).paused : undefined;
      if (p.kind === "job") {
        const input = p.doc?.input as CreateJobInput;
        if (p.action === "create") {
          const r = await api.request(CliCreateJobDocument, { input });
          io.out(`job ${p.name} created (${r.createJob.id})\n`);
          for (const w of r.createJob.warnings) io.err(`warning: job ${p.name}: ${w}\n`);
        } else if (p.action === "update") {
          const update = jobUpdate(input, p.changes);
          if (Object.keys(update).length) {
            const r = await api.request(CliUpdateJobDocument, { id: p.id!, input: update });
            for (const w of r.updateJob.warnings) io.err(`warning: job ${p.name}: ${w}\n`);
          }
          if (p.changes.some((c) => c.field === "paused")) {
            if (paused) await api.request(CliPauseJobDocument, { id: p.id! });
            else await api.request(CliResumeJobDocument, { id: p.id! });
          }
          io.out(`job ${p.name} updated (${p.changes.map((c) => c.field).join(", ")})\n`);
        } else {
          await api.request(CliDeleteJobDocument, { id: p.id! });
          io.out(`job ${p.name} deleted (${p.id})\n`);
        }
      } else {
        const input = p.doc?.input as CreateDagInput;
        if (p.action === "create") {
          const r = await api.request(CliCreateDagDocument, { input });
          io.out(`dag ${p.name} created (${r.createDag.id})\n`);
          for (const w of r.createDag.warnings) io.err(`warning: dag ${p.name}: ${w}\n`);
        } else if (p.action === "update") {
          const update = dagUpdate(input, p.changes);
          if (Object.keys(update).length) await api.request(CliUpdateDagDocument, { id: p.id!, input: update });
          if (p.changes.some((c) => c.field === "paused")) {
            if (paused) await api.request(CliPauseDagDocument, { id: p.id! });
            else await api.request(CliResumeDagDocument, { id: p.id! });
          }
          io.out(`dag ${p.name} updated (${p.changes.map((c) => c.field).join(", ")})\n`);
        } else {
          await api.request(CliDeleteDagDocument, { id: p.id! });
          io.out(`dag ${p.name} deleted (${p.id})\n`);
        }
      }
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      problems.push(placed(p, e));
    }
  }
  return problems;
}

export { EXIT };

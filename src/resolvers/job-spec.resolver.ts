/**
 * The text of a job's spec (command, argv, env, script source and args, HTTP body and headers),
 * for a job the request read without it (`JobSpec.textOf`: the API's reads of jobs leave it out,
 * store/jobs/user-reads.ts). Read only for the jobs whose spec text the request asks for, within
 * a budget per request (Lookups.specText): listed whole, a page of jobs with 1 MiB scripts was
 * 100 MiB per alias. A spec mapped whole (a mutation's answer, a DAG task's) answers as it is.
 */
import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import type { JobSpec as DomainJobSpec } from "../domain/index.js";
import { HttpRequest, JobSpec } from "../schema/index.js";
import { JSONObject } from "../schema/index.js";
import type { Context } from "./context.js";
import { toSpec } from "./mappers.js";

/** Each spec's full form, once per request and spec. */
const whole = new WeakMap<JobSpec, Promise<JobSpec>>();

function withText(spec: JobSpec, ctx: Context): Promise<JobSpec> {
  const omitted = spec.textOf;
  if (!omitted) return Promise.resolve(spec);
  let full = whole.get(spec);
  if (!full) {
    full = ctx.lookups.specText(omitted.jobId).then((text) => toSpec(merged(omitted.spec, text ?? {})));
    whole.set(spec, full);
  }
  return full;
}

/** The stored spec as read without its text, with its text put back. */
function merged(spec: DomainJobSpec, text: Partial<DomainJobSpec>): DomainJobSpec {
  return {
    ...spec,
    command: text.command ?? null,
    argv: text.argv ?? null,
    env: text.env ?? {},
    ...(spec.script ? { script: { ...spec.script, ...text.script } } : {}),
    ...(spec.binary ? { binary: { ...spec.binary, ...text.binary } } : {}),
    ...(spec.http ? { http: { ...spec.http, ...text.http } } : {}),
  };
}

@Resolver(() => JobSpec)
export class JobSpecResolver {
  @FieldResolver(() => String, { nullable: true, description: "Run by /bin/sh -c." })
  async command(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<string | null> {
    return (await withText(spec, ctx)).command;
  }

  @FieldResolver(() => [String], { nullable: true, description: "Executed directly, without a shell." })
  async argv(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<string[] | null> {
    return (await withText(spec, ctx)).argv;
  }

  @FieldResolver(() => String, { nullable: true, description: "SCRIPT: the inline script." })
  async source(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<string | null> {
    return (await withText(spec, ctx)).source;
  }

  @FieldResolver(() => [String], { nullable: true, description: "SCRIPT or BINARY: arguments after the file." })
  async args(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<string[] | null> {
    return (await withText(spec, ctx)).args;
  }

  @FieldResolver(() => HttpRequest, { nullable: true, description: "HTTP: the request." })
  async http(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<HttpRequest | null> {
    return (await withText(spec, ctx)).http;
  }

  @FieldResolver(() => JSONObject)
  async env(@Root() spec: JobSpec, @Ctx() ctx: Context): Promise<Record<string, string>> {
    return (await withText(spec, ctx)).env;
  }
}

/**
 * What this node knows of the job kinds beyond COMMAND: the interpreters it has (and so the ready
 * queues it pulls from), the HTTP agents and signing secrets of HTTP jobs, and where it gets
 * artifacts. The slot runner asks it how to run each attempt.
 */
import { readyQueuesFor, type JobSpec, type NodeInterpreter, type RunDoc } from "../../domain/index.js";
import { HttpSigning, resolveArtifactOfOwner } from "../../core/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import type { AbortLike } from "../abort.js";
import type { ProcessResult } from "../outcome.js";
import { runHttpAttempt } from "./http-job.js";
import { detectInterpreters } from "./interpreters.js";
import { installProgram, programSpec, type ArtifactSource } from "./programs.js";
import { httpAgents, type HttpAgents, type HttpTargetRules } from "../../core/index.js";

export interface JobKindsOptions {
  /** Interpreters this node offers, of those it has; null: every one it has. */
  interpreters: readonly string[] | null;
  httpTargets: HttpTargetRules;
  artifacts: ArtifactSource | null;
}

export class JobKinds {
  readonly interpreters: NodeInterpreter[];
  private readonly byName: Map<string, NodeInterpreter>;
  private agents: HttpAgents | null = null;
  private readonly signing: HttpSigning;

  constructor(
    private readonly o: JobKindsOptions,
    private readonly deps: { mongo: Mongo; clock: Clock },
  ) {
    this.interpreters = detectInterpreters(o.interpreters);
    this.byName = new Map(this.interpreters.map((i) => [i.name, i]));
    this.signing = new HttpSigning(deps);
  }

  /** The ready queues of `pools` whose runs this node takes (and whose wake-ups it listens to): each pool's own, and its script queues of the interpreters here. */
  queues(pools: readonly string[]): string[] {
    return readyQueuesFor(pools, this.interpreters.map((i) => i.name));
  }

  /** Whether this node can start a run of `spec` (a script whose interpreter it lacks: no). */
  canRun(spec: JobSpec): boolean {
    return spec.kind !== "SCRIPT" || !spec.script || this.byName.has(spec.script.interpreter);
  }

  /** The spec the sandbox runs: a COMMAND as it is, a SCRIPT or BINARY as the argv that runs its file. */
  sandboxSpec(spec: JobSpec): JobSpec {
    return spec.kind === "SCRIPT" || spec.kind === "BINARY" ? programSpec(spec, this.byName) : spec;
  }

  /**
   * Puts a SCRIPT's or BINARY's file into the run's working directory (nothing for other kinds).
   * An artifact must still be COMPLETE and its owner's (checked now, not only at submission),
   * and its bytes are verified by sha256 by the cache before they are copied.
   */
  async install(run: RunDoc, workDir: string): Promise<void> {
    const spec = run.spec;
    if (spec.kind !== "SCRIPT" && spec.kind !== "BINARY") return;
    const artifact = spec.script?.artifact ?? spec.binary?.artifact ?? null;
    if (artifact) {
      const now = await resolveArtifactOfOwner(this.deps.mongo, run.ownerId, artifact.id);
      if (now.sha256 !== artifact.sha256) throw new Error(`artifact ${artifact.id} changed since the job was saved (sha256 ${now.sha256}, not ${artifact.sha256})`);
    }
    await installProgram(spec, workDir, this.o.artifacts);
  }

  runHttp(run: RunDoc, token: number, signal: AbortLike): Promise<ProcessResult> {
    this.agents ??= httpAgents(this.o.httpTargets);
    return runHttpAttempt(run, token, { agents: this.agents, secretsFor: (owner) => this.signing.secretsFor(owner), userAgent: "Kairos-Executor/1" }, signal);
  }

  close(): void {
    this.agents?.destroy();
    this.agents = null;
  }
}

/** A scheduled DAG's timer (see docs/dags.md, "Schedules"). */
import type { Principal } from "../../auth/index.js";
import type { DagDoc } from "../../domain/index.js";
import { ValidationError } from "../../domain/index.js";
import type { DagPatch } from "./definition.js";

export class DagSchedules {
  check(_dag: DagDoc, _input: DagPatch): void {
    throw new ValidationError("schedule", "scheduled DAGs are not available yet");
  }
  async attach(_caller: Principal, _dag: DagDoc, _input: DagPatch): Promise<void> {}
  async sync(_caller: Principal, _dag: DagDoc, _patch: DagPatch): Promise<void> {}
  async detach(_caller: Principal, _dag: DagDoc): Promise<void> {}
  async pause(_caller: Principal, _dag: DagDoc): Promise<void> {}
  async resume(_caller: Principal, _dag: DagDoc): Promise<void> {}
}

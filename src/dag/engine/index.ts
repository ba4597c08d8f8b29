/**
 * The DAG engine (docs/dags.md; docs/design.md, "DAG workflows"): the DAG and DAG run services, the
 * advancer that applies plan/'s pure step by compare-and-set on a DAG run's document and makes task
 * instances as ordinary runs, scheduled DAGs through a timer job, events, the sweeper and the
 * retention of DAG definitions.
 */
export { DagAdvancer } from "./advance.js";
export { observedStates, taskStateOfRun } from "./task-states.js";
export { MAX_PARALLEL, MAX_PARAMS_BYTES, planOf, type DagInput, type DagPatch, type DagTaskInput } from "./definition.js";
export { DagEngine, type DagEngineDeps } from "./engine.js";
export { DagEvents, type DagEvent } from "./events.js";
export { checkResult, DagTaskIo, MAX_INPUTS_BYTES, MAX_RESULT_BYTES, type TaskFiles } from "./io.js";
export { instanceFireKey } from "../../domain/index.js";
export { type Submit as DagSubmit } from "./definition.js";
export { DagRunService } from "./run-service.js";
export { DagService } from "./service.js";
export { DefinitionRetention, type DefinitionRetentionOptions, type RetentionPass } from "./retention.js";
export { DagSweeper, type SweeperOptions } from "./sweeper.js";

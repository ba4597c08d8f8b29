export { DagAdvancer, observedStates, taskStateOfRun } from "./advance.js";
export { MAX_PARAMS_BYTES, planOf, type DagInput, type DagPatch, type DagTaskInput } from "./definition.js";
export { DagEngine, type DagEngineDeps } from "./engine.js";
export { DagEvents, type DagEvent } from "./events.js";
export { checkResult, DagTaskIo, MAX_INPUTS_BYTES, MAX_RESULT_BYTES, type TaskFiles } from "./io.js";
export { instanceFireKey } from "./keys.js";
export { DagService, type Submit as DagSubmit } from "./service.js";
export { DagSweeper, type SweeperOptions } from "./sweeper.js";

/** The DAG engine's fire keys are the domain's (domain/fire-keys.ts, where every key is built). */
export { dagAttemptOfFireKey, instanceFireKey, manualFireKey as manualDagRunKey } from "../../domain/index.js";

/** The composition root: starting a role (or all of them, dev) from its settings. */
export * from "./start.js";
export * from "./dev-emulator.js";
export * from "./dev-banner.js";
export { runEmulatorCli } from "./ports.js";

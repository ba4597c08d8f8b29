export * from "./settings.js";

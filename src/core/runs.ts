export * from "./runs/index.js";

export * from "./loop.js";

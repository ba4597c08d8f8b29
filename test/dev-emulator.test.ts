/** Loading the emulator package on demand, and the message when it is not installed. */
import { describe, expect, it } from "vitest";
import { isEmulatorMissing, loadEmulator, loadEmulatorCli } from "../src/app/dev-emulator.js";
import { ConfigError } from "../src/domain/errors.js";

const notFound = (message: string) => Object.assign(new Error(message), { code: "ERR_MODULE_NOT_FOUND" });

describe("dev emulator loading", () => {
  it("tells the package's absence from other failures", () => {
    expect(isEmulatorMissing(notFound("Cannot find package '@kairos/mongo-emulator' imported from /app/dist/dev-emulator.js"))).toBe(true);
    expect(isEmulatorMissing(notFound("Cannot find module '/repo/node_modules/@kairos/mongo-emulator/dist/index.js' imported from /repo/dist/dev-emulator.js"))).toBe(true);
    // A dependency of something else, a different error code, or not an error at all.
    expect(isEmulatorMissing(notFound("Cannot find package 'mingo' imported from /elsewhere/x.js"))).toBe(false);
    expect(isEmulatorMissing(Object.assign(new Error("Cannot find package '@kairos/mongo-emulator'"), { code: "EACCES" }))).toBe(false);
    expect(isEmulatorMissing(null)).toBe(false);
    expect(isEmulatorMissing("Cannot find package '@kairos/mongo-emulator'")).toBe(false);
  });

  it("turns a missing package into a ConfigError that says to set MONGO_URL", async () => {
    const missing = () => Promise.reject(notFound("Cannot find package '@kairos/mongo-emulator' imported from /app/dist/dev-emulator.js"));
    const dev = loadEmulator(missing);
    await expect(dev).rejects.toBeInstanceOf(ConfigError);
    await expect(dev).rejects.toThrow(/kairos dev without MONGO_URL needs the MongoDB emulator \(@kairos\/mongo-emulator\).*Set MONGO_URL \(or --mongo-url\)/);
    await expect(dev).rejects.toThrow(/or run kairos dev from a checkout after `npm ci`/);
    await expect(loadEmulatorCli(missing)).rejects.toThrow(/^kairos emulator needs the MongoDB emulator.*Run it from a checkout after `npm ci`/);
  });

  it("passes other import failures through unchanged", async () => {
    const boom = new Error("syntax error in the emulator");
    await expect(loadEmulator(() => Promise.reject(boom))).rejects.toBe(boom);
  });

  it("loads the package when it is there", async () => {
    const { startEmulator } = await loadEmulator();
    const emulator = await startEmulator({ port: 0 });
    try {
      expect(emulator.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await emulator.stop();
    }
    expect(typeof (await loadEmulatorCli()).emulatorMain).toBe("function");
  });
});

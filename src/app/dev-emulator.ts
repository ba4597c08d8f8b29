/**
 * The MongoDB emulator lives in its own workspace package (`packages/mongo-emulator`), a
 * devDependency: only `kairos dev` without MONGO_URL and `kairos emulator` use it, and the
 * production image is built without it. So it is imported on demand, here and nowhere else in
 * the product, and its absence becomes a message that says what to do instead of a stack trace.
 */
import type * as EmulatorModule from "@kairos/mongo-emulator";
import type * as EmulatorCliModule from "@kairos/mongo-emulator/cli";
import { ConfigError } from "../domain/index.js";

export const EMULATOR_PACKAGE = "@kairos/mongo-emulator";

/** True when `e` says the emulator package itself (not something else) could not be found. */
export function isEmulatorMissing(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  if (err?.code !== "ERR_MODULE_NOT_FOUND" || typeof err.message !== "string") return false;
  // "Cannot find package '@kairos/mongo-emulator' imported from …" (link gone, as in the image), or
  // "Cannot find module '…/packages/mongo-emulator/dist/index.js'" (a checkout where it was never built).
  return err.message.includes(`'${EMULATOR_PACKAGE}'`) || err.message.includes("/mongo-emulator/dist/");
}

const FROM_CHECKOUT = "from a checkout after `npm ci`, which installs and builds it";

async function importOrExplain<T>(load: () => Promise<T>, what: string, instead: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (!isEmulatorMissing(e)) throw e;
    throw new ConfigError(
      `${what} needs the MongoDB emulator (${EMULATOR_PACKAGE}), a development package that is not installed here ` +
        `(production images leave it out). ${instead}.`,
      { cause: e },
    );
  }
}

/** The emulator's API, for `kairos dev` without MONGO_URL. */
export function loadEmulator(load: () => Promise<typeof EmulatorModule> = () => import("@kairos/mongo-emulator")): Promise<typeof EmulatorModule> {
  return importOrExplain(load, "kairos dev without MONGO_URL", `Set MONGO_URL (or --mongo-url) to a MongoDB replica set, or run kairos dev ${FROM_CHECKOUT}`);
}

/** The emulator's command line, for `kairos emulator`. */
export function loadEmulatorCli(
  load: () => Promise<typeof EmulatorCliModule> = () => import("@kairos/mongo-emulator/cli"),
): Promise<typeof EmulatorCliModule> {
  return importOrExplain(load, "kairos emulator", `Run it ${FROM_CHECKOUT}, or use a real MongoDB`);
}

/**
 * Where the command line keeps its logins: `$XDG_CONFIG_HOME/kairos/credentials.json` (else
 * `~/.config/kairos/`), the directory 0700 and the file 0600, one entry per profile. For CI,
 * `KAIROS_SERVER` with `KAIROS_TOKEN` or `KAIROS_API_KEY` stand in for a stored login.
 */
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { CliError } from "./errors.js";

export interface Profile {
  server: string;
  /** A login's token (from `kairos login --password-stdin`), or an API key. */
  token?: string;
  apiKey?: string;
  username?: string;
  expiresAt?: string | null;
}

interface CredentialsFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export function configDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(base, "kairos");
}

export const credentialsPath = (env: NodeJS.ProcessEnv) => join(configDir(env), "credentials.json");

export async function readCredentials(env: NodeJS.ProcessEnv): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(credentialsPath(env), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { profiles: ownProfiles({}) };
    throw e;
  }
  try {
    const parsed = JSON.parse(text) as CredentialsFile;
    return { current: parsed.current, profiles: ownProfiles(parsed.profiles ?? {}) };
  } catch {
    throw new CliError(`${credentialsPath(env)} is not valid JSON; remove it and log in again`);
  }
}

/**
 * The profiles as a map without a prototype: a profile named `constructor` or `toString` is not
 * Object's (it was found there, and `--server: "undefined" is not a URL` said so), and one named
 * `__proto__` is kept (it set the object's prototype instead, so a login said it was stored and
 * was not).
 */
function ownProfiles(profiles: Record<string, Profile>): Record<string, Profile> {
  const own = Object.create(null) as Record<string, Profile>;
  for (const [name, p] of Object.entries(profiles)) own[name] = p;
  return own;
}

/** Writes the file 0600 in a 0700 directory, through a temporary file renamed over it. */
export async function writeCredentials(env: NodeJS.ProcessEnv, file: CredentialsFile): Promise<void> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const path = credentialsPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

/** The profile a command uses: --profile, else KAIROS_PROFILE, else the last one logged in to, else "default". */
export function profileName(flag: string | undefined, env: NodeJS.ProcessEnv, file: CredentialsFile): string {
  if (flag !== undefined && !PROFILE_NAME.test(flag)) throw new CliError(`--profile: ${profileRule(flag)}`);
  if (env.KAIROS_PROFILE && !PROFILE_NAME.test(env.KAIROS_PROFILE)) throw new CliError(`KAIROS_PROFILE: ${profileRule(env.KAIROS_PROFILE)}`);
  return flag || env.KAIROS_PROFILE || file.current || "default";
}

/** A profile's name: what a person types after --profile, without spaces or control characters. */
const PROFILE_NAME = /^[^\s\u0000-\u001f\u007f-\u009f]{1,64}$/u;
const profileRule = (given: string) =>
  `${given === "" ? "an empty name is none" : `"${given.slice(0, 70).replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")}" is no profile name`}: 1–64 characters without spaces, e.g. --profile prod`;

/** `http://host:4000` or `http://host:4000/graphql` → the GraphQL endpoint's URL. */
export function normalizeServer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`--server: "${raw}" is not a URL (e.g. http://localhost:4000)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`--server: "${raw}" must be an http:// or https:// URL`);
  if (!url.pathname.endsWith("/graphql")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/graphql`;
  return url.toString();
}

export interface Connection {
  server: string;
  /** The value of the Authorization header: `Bearer <token or key>`. */
  credential: string | null;
  profile: string;
  source: "environment" | "profile";
}

/** The server and credential a command talks to: flags and the environment first, then the profile. */
export async function resolveConnection(opts: { server?: string; profile?: string }, env: NodeJS.ProcessEnv): Promise<Connection> {
  const file = await readCredentials(env);
  const name = profileName(opts.profile, env, file);
  const stored = file.profiles[name];
  const envCredential = env.KAIROS_TOKEN || env.KAIROS_API_KEY;
  const server = opts.server || env.KAIROS_SERVER || stored?.server;
  if (!server) {
    throw new CliError(`no server: log in first (kairos login --server URL ...) or set KAIROS_SERVER${opts.profile ? ` (profile "${name}" has no login)` : ""}`);
  }
  if (envCredential) return { server: normalizeServer(server), credential: `Bearer ${envCredential}`, profile: name, source: "environment" };
  const secret = stored && normalizeServer(stored.server) === normalizeServer(server) ? (stored.token ?? stored.apiKey) : undefined;
  return { server: normalizeServer(server), credential: secret ? `Bearer ${secret}` : null, profile: name, source: "profile" };
}

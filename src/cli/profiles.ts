/**
 * Where the command line keeps its logins: `$XDG_CONFIG_HOME/kairos/credentials.json` (else
 * `~/.config/kairos/`), the directory 0700 and the file 0600, one entry per profile. For CI,
 * `KAIROS_SERVER` with `KAIROS_TOKEN` or `KAIROS_API_KEY` stand in for a stored login.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileProblem } from "../domain/index.js";
import { CliError } from "./errors.js";
import { requestTimeoutMs } from "./network.js";

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
    throw new CliError(`cannot read the stored logins in ${credentialsPath(env)}: ${fileProblem(e)}${ELSEWHERE}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${credentialsPath(env)} is not valid JSON; remove it and log in again`);
  }
  // Valid JSON of another shape (null, a list, "profiles" that is no object) was read as no
  // logins, or failed on reading null's fields and said "is not valid JSON".
  const profiles = isRecord(parsed) ? (parsed.profiles ?? {}) : undefined;
  if (!isRecord(parsed) || !isRecord(profiles)) {
    const what = isRecord(parsed) ? `its "profiles" is ${kindOf(profiles)}` : `it holds ${kindOf(parsed)}`;
    throw new CliError(`${credentialsPath(env)} is not a kairos credentials file (${what}, not {"profiles": {NAME: {server, token}}}); remove it and log in again`);
  }
  return { current: typeof parsed.current === "string" ? parsed.current : undefined, profiles: ownProfiles(profiles as Record<string, Profile>) };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`);

/**
 * The stored profile `name`, checked: an entry edited by hand or damaged is said to be so (its
 * server of 5 said `--server: "5" is not a URL`, of a flag never given), not used as half a login.
 */
export function storedProfile(env: NodeJS.ProcessEnv, file: CredentialsFile, name: string): Profile | undefined {
  const p: unknown = file.profiles[name];
  if (p === undefined) return undefined;
  const text = (v: unknown) => v === undefined || v === null || typeof v === "string";
  const problem = !isRecord(p)
    ? `is ${kindOf(p)}, not a login`
    : typeof p.server !== "string"
      ? "has no server URL"
      : !text(p.token) || !text(p.apiKey) || !text(p.username) || !text(p.expiresAt)
        ? "has a field that is not text"
        : null;
  if (problem) throw new CliError(`profile "${name}" in ${credentialsPath(env)} ${problem}: log in again (kairos login --profile ${name} --server URL …), or remove it (kairos logout --profile ${name})`);
  return p as unknown as Profile;
}

/**
 * A token or API key as it can be sent: outer spaces and line ends dropped, and nothing but visible
 * ASCII inside (what a JWT and a kairos_ key are made of). A line break inside one (two keys pasted,
 * a key file with CRLF lines) made fetch fail with a message that held the whole key.
 */
export function checkedCredential(source: string, raw: string): string {
  const secret = raw.trim();
  const at = [...secret].findIndex((c) => c < "!" || c > "~");
  if (at < 0) return secret;
  const c = [...secret][at]!;
  const what = c === "\n" || c === "\r" ? "a line break" : c === " " ? "a space" : c === "\t" ? "a tab" : c < " " || c === "\u007f" ? "a control character" : `a character outside ASCII (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})`;
  throw new CliError(`${source} holds ${what} at character ${at + 1} of ${[...secret].length}: a token or API key is one line of letters, digits and punctuation; give it alone (it is not shown here)`);
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
  const path = credentialsPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    await writeFile(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new CliError(`cannot keep the login in ${path}: ${fileProblem(e)}${ELSEWHERE}`);
  }
}

/** What to do when the stored logins' file cannot be used. */
const ELSEWHERE = "; set XDG_CONFIG_HOME to a directory of yours, or give KAIROS_SERVER with KAIROS_TOKEN or KAIROS_API_KEY instead of a stored login";

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

/** `http://host:4000` or `http://host:4000/graphql` → the GraphQL endpoint's URL; `source` names where it was given, for a message. */
export function normalizeServer(raw: string, source = "--server"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`${source}: "${raw}" is not a URL (e.g. http://localhost:4000)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`${source}: "${raw}" must be an http:// or https:// URL`);
  // fetch refuses a URL with credentials in it, and its message (and ours) printed the password.
  if (url.username || url.password) {
    const shown = `${url.protocol}//…@${url.host}${url.pathname === "/" ? "" : url.pathname}`;
    throw new CliError(`${source}: a server URL with a user name or password in it (${shown}) is not used: give the URL without them, and the credential with kairos login, KAIROS_TOKEN or KAIROS_API_KEY`);
  }
  if (!url.pathname.endsWith("/graphql")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/graphql`;
  return url.toString();
}

export interface Connection {
  server: string;
  /** How long a request waits for an answer (KAIROS_TIMEOUT; network.ts requestTimeoutMs). */
  timeoutMs?: number;
  /** The value of the Authorization header: `Bearer <token or key>`. */
  credential: string | null;
  profile: string;
  source: "environment" | "profile";
}

/** The server and credential a command talks to: flags and the environment first, then the profile. */
export async function resolveConnection(opts: { server?: string; profile?: string }, env: NodeJS.ProcessEnv): Promise<Connection> {
  const file = await readCredentials(env);
  const name = profileName(opts.profile, env, file);
  const stored = storedProfile(env, file, name);
  const envCredential = env.KAIROS_TOKEN ? ["KAIROS_TOKEN", env.KAIROS_TOKEN] : env.KAIROS_API_KEY ? ["KAIROS_API_KEY", env.KAIROS_API_KEY] : null;
  const [server, serverSource] = opts.server ? [opts.server, "--server"] : env.KAIROS_SERVER ? [env.KAIROS_SERVER, "KAIROS_SERVER"] : [stored?.server, `profile "${name}" (${credentialsPath(env)})`];
  if (!server) {
    throw new CliError(`no server: log in first (kairos login --server URL ...) or set KAIROS_SERVER${opts.profile ? ` (profile "${name}" has no login)` : ""}`);
  }
  const url = normalizeServer(server, serverSource);
  const timeoutMs = requestTimeoutMs(env);
  if (envCredential) return { server: url, timeoutMs, credential: `Bearer ${checkedCredential(envCredential[0]!, envCredential[1]!)}`, profile: name, source: "environment" };
  const same = stored && normalizeServer(stored.server, `profile "${name}" (${credentialsPath(env)})`) === url;
  const secret = same ? (stored.token ? ["token", stored.token] : stored.apiKey ? ["API key", stored.apiKey] : null) : null;
  const credential = secret ? `Bearer ${checkedCredential(`the ${secret[0]} of profile "${name}" (${credentialsPath(env)})`, secret[1]!)}` : null;
  return { server: url, timeoutMs, credential, profile: name, source: "profile" };
}

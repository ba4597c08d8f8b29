/**
 * What `kairos login` says when the server refuses it: what went wrong and what to do, instead of
 * the API's message with the advice every other command gives ("log in with `kairos login`", to
 * someone who just did).
 */
import { ApiError } from "./client.js";
import { CliError } from "./errors.js";

/** A refused password login (`--username U --password-stdin`) or API key (`--api-key-stdin`) as the error to print; other errors as they are. */
export function loginRefused(server: string, how: { username: string } | { apiKey: string }, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  const detail = e.detail;
  if ("username" in how) {
    const who = `login to ${server} as "${how.username}" refused`;
    if (e.code === "UNAUTHENTICATED" && /invalid username or password/i.test(detail)) {
      return new CliError(
        `${who}: the user name or the password is wrong (the server does not say which). ` +
          `Check --username, and pipe only the password: printf '%s' "$PASSWORD" | kairos login --server ... --username ... --password-stdin. ` +
          `Repeated failures make logins wait, then lock the name for a while.`,
      );
    }
    if (e.code === "UNAUTHENTICATED" && /disabled/i.test(detail)) return new CliError(`${who}: the account is disabled; ask an administrator to enable it`);
    return new CliError(`${who}: ${detail}`);
  }
  if (e.code === "UNAUTHENTICATED") {
    const shape = how.apiKey.startsWith("kairos_") ? "" : " (what was piped in does not start with kairos_, as API keys do)";
    return new CliError(
      `the API key was refused by ${server}: ${detail}${shape}. Pipe the whole key alone (printf '%s' "$KAIROS_API_KEY" | kairos login --server ... --api-key-stdin); ` +
        `a revoked or expired key stays refused: make a new one (the API's createApiKey), or log in with --username and --password-stdin.`,
    );
  }
  return new CliError(`login to ${server} with the API key failed: ${detail}`);
}

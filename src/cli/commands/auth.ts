/** `kairos login`, `logout`, `whoami`. */
import type { Command } from "commander";
import { CliLoginDocument, CliMeDocument } from "../../../generated/client/graphql.js";
import { GqlClient } from "../client.js";
import type { Ctx } from "../context.js";
import { CliError } from "../errors.js";
import { loginRefused } from "../login-errors.js";
import { requestTimeoutMs } from "../network.js";
import { emit, parseFormat } from "../output.js";
import { checkedCredential, credentialsPath, normalizeServer, profileName, readCredentials, resolveConnection, storedProfile, writeCredentials, type Profile } from "../profiles.js";
import { connectionOptions, example } from "./common.js";

export function registerAuth(program: Command, ctx: Ctx): void {
  connectionOptions(
    program
      .command("login")
      .description("log in to a Kairos server and keep the credential in the profile (mode 0600, never printed)")
      .option("--username <name>", "the user to log in as (with --password-stdin)")
      .option("--password-stdin", "read the password from stdin")
      .option("--api-key-stdin", "read an API key (kairos_...) from stdin instead of logging in with a password"),
  )
    .addHelpText(
      "after",
      example(
        "printf '%s' \"$PASSWORD\" | kairos login --server http://localhost:4000 --username alice --password-stdin",
        "printf '%s' \"$KAIROS_KEY\" | kairos login --server https://kairos.example.com --api-key-stdin --profile prod",
      ) + `\nCredentials are kept in $XDG_CONFIG_HOME/kairos/credentials.json (else ~/.config/kairos/).\nIn CI, set KAIROS_SERVER and KAIROS_TOKEN or KAIROS_API_KEY instead of logging in.`,
    )
    .action(async (opts: { username?: string; passwordStdin?: boolean; apiKeyStdin?: boolean }) => {
      const env = ctx.io.env;
      const file = await readCredentials(env);
      // --server and --profile before the command are the program's: ctx.globals() has them from either side.
      const { server: serverFlag, profile: profileFlag } = ctx.globals();
      const name = profileName(profileFlag, env, file);
      const [serverRaw, source] = serverFlag ? [serverFlag, "--server"] : env.KAIROS_SERVER ? [env.KAIROS_SERVER, "KAIROS_SERVER"] : [storedProfile(env, file, name)?.server, `profile "${name}" (${credentialsPath(env)})`];
      if (!serverRaw) throw new CliError("login needs --server URL (or KAIROS_SERVER)");
      const server = normalizeServer(serverRaw, source);
      if (Boolean(opts.passwordStdin) === Boolean(opts.apiKeyStdin)) throw new CliError("give one of --password-stdin (with --username) or --api-key-stdin");
      // On a terminal the read waited for Ctrl-D, silently, with the secret shown as it was typed.
      if (ctx.io.stdinIsTerminal) {
        const [what, pipe] = opts.passwordStdin ? ["password", `printf '%s' "$PASSWORD" | kairos login --server ${serverRaw} --username ${opts.username ?? "NAME"} --password-stdin`] : ["API key", `printf '%s' "$KAIROS_API_KEY" | kairos login --server ${serverRaw} --api-key-stdin`];
        throw new CliError(`--${opts.passwordStdin ? "password" : "api-key"}-stdin reads the ${what} from a pipe, and stdin is this terminal (what is typed would show): ${pipe} (read -rs ${opts.passwordStdin ? "PASSWORD" : "KAIROS_API_KEY"} first reads it without showing it)`);
      }
      const secret = (await ctx.io.stdin()).replace(/\r?\n$/, "");
      if (!secret) throw new CliError(`nothing on stdin: pipe the ${opts.passwordStdin ? "password" : "API key"} in`);
      let profile: Profile;
      if (opts.passwordStdin) {
        if (!opts.username) throw new CliError("--password-stdin needs --username");
        const anon = new GqlClient({ server, timeoutMs: requestTimeoutMs(env), credential: null, profile: name, source: "profile" });
        const username = opts.username;
        const { login } = await anon.request(CliLoginDocument, { username, password: secret }).catch((e: unknown) => {
          throw loginRefused(server, { username }, e);
        });
        profile = { server, token: login.token, username: login.user.username, expiresAt: login.expiresAt };
      } else {
        const key = checkedCredential("the API key on stdin", secret);
        const client = new GqlClient({ server, timeoutMs: requestTimeoutMs(env), credential: `Bearer ${key}`, profile: name, source: "profile" });
        const { me } = await client.request(CliMeDocument).catch((e: unknown) => {
          throw loginRefused(server, { apiKey: key }, e);
        });
        profile = { server, apiKey: key, username: me.username, expiresAt: null };
      }
      file.profiles[name] = profile;
      file.current = name;
      await writeCredentials(env, file);
      ctx.io.out(`Logged in to ${server} as ${profile.username} (profile "${name}"${profile.expiresAt ? `, until ${profile.expiresAt}` : ""})\n`);
    });

  program
    .command("logout")
    .description("forget the profile's credential")
    .option("--profile <name>", "the profile (default: the current one)")
    .addHelpText("after", example("kairos logout", "kairos logout --profile prod"))
    .action(async () => {
      const env = ctx.io.env;
      const file = await readCredentials(env);
      const name = profileName(ctx.globals().profile, env, file);
      if (!file.profiles[name]) {
        ctx.io.err(`not logged in (profile "${name}")\n`);
        return;
      }
      delete file.profiles[name];
      if (file.current === name) delete file.current;
      await writeCredentials(env, file);
      ctx.io.out(`Logged out (profile "${name}"; ${credentialsPath(env)})\n`);
    });

  connectionOptions(
    program
      .command("whoami")
      .description("the user the credential belongs to, and the server")
      .option("-o, --output <format>", "table, json or yaml", "table"),
  )
    .addHelpText("after", example("kairos whoami", "kairos whoami -o json"))
    .action(async (opts: { output: string }) => {
      const format = parseFormat(opts.output);
      const conn = await resolveConnection(ctx.globals(), ctx.io.env);
      if (!conn.credential) throw new CliError(`not logged in to ${conn.server}: run kairos login`);
      const me = await ctx.whoami();
      const data = { id: me.id, username: me.username, role: me.role, maxConcurrentRuns: me.maxConcurrentRuns ?? null, server: conn.server, profile: conn.source === "profile" ? conn.profile : null, credentialFrom: conn.source };
      emit(ctx.io, format, data, () => `${me.username} (${me.role.toLowerCase()}, id ${me.id}) on ${conn.server}${conn.source === "environment" ? " (credential from the environment)" : ` (profile "${conn.profile}")`}\n`);
    });
}

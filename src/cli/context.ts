/** What every command gets: the I/O, the global flags, and a client made on first use. */
import { CliMeDocument, type CliMeQuery } from "../../generated/client/graphql.js";
import { GqlClient } from "./client.js";
import { paint, type Io } from "./output.js";
import { resolveConnection } from "./profiles.js";

export interface GlobalOptions {
  server?: string;
  profile?: string;
}

export class Ctx {
  private client: GqlClient | null = null;
  private me: CliMeQuery["me"] | null = null;
  /** Ends open subscriptions when the command is done or interrupted. */
  readonly cleanups: Array<() => void> = [];
  /** What the process exits with when the command returns (a followed run's code). */
  exitCode = 0;

  constructor(
    readonly io: Io,
    readonly globals: () => GlobalOptions,
  ) {}

  async api(): Promise<GqlClient> {
    if (!this.client) this.client = new GqlClient(await resolveConnection(this.globals(), this.io.env), (t) => this.io.err(paint(this.io, "gray", `[kairos] ${t}\n`)));
    return this.client;
  }

  async whoami(): Promise<CliMeQuery["me"]> {
    if (!this.me) this.me = (await (await this.api()).request(CliMeDocument)).me;
    return this.me;
  }

  close(): void {
    for (const c of this.cleanups.splice(0)) c();
  }
}

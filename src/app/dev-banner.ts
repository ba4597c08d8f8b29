/**
 * What `kairos dev` tells the person who started it: where it listens, where its data is, and the
 * admin password. The banner is framed to stand out among the log lines, and a generated password
 * is also kept in a file of the data directory (mode 0600; Jenkins' initialAdminPassword and
 * Airflow standalone's password file do the same) that the banner names, so that one scrolled
 * away is not lost: the banner of every later start names the file again.
 */
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KairosConfig } from "../config/index.js";

/** Where a generated admin password is kept, in the data directory. */
export function adminPasswordFile(dataDir: string): string {
  return join(dataDir, "admin-password.txt");
}

/** Where the admin password comes from, as the banner tells it. */
export type AdminPasswordSource =
  | { kind: "generated"; password: string; file: string | null }
  | { kind: "environment" }
  | { kind: "kept"; file: string }
  | { kind: "unknown" };

/**
 * Keeps a password generated now in the data directory's file (null file: it could not be
 * written; the banner still shows the password). KAIROS_ADMIN_PASSWORD is authoritative: a file
 * left from an earlier generated password is removed then, as it no longer opens anything.
 */
export function keepAdminPassword(config: Pick<KairosConfig, "dataDir" | "adminPassword">, generated: string | null): AdminPasswordSource {
  const file = adminPasswordFile(config.dataDir);
  if (generated) {
    try {
      writeFileSync(file, `${generated}\n`, { mode: 0o600 });
      chmodSync(file, 0o600); // a file left from before keeps its mode otherwise
      return { kind: "generated", password: generated, file };
    } catch {
      return { kind: "generated", password: generated, file: null };
    }
  }
  if (config.adminPassword) {
    rmSync(file, { force: true });
    return { kind: "environment" };
  }
  return existsSync(file) ? { kind: "kept", file } : { kind: "unknown" };
}

export interface BannerInfo {
  url: string;
  adminUser: string;
  dataDir: string;
  embeddedMongo: boolean;
  inMemoryQueues: boolean;
  password: AdminPasswordSource;
}

/** The banner's lines; `color`: bold and a green frame, for a terminal. */
export function devBanner(info: BannerInfo, color: boolean): string {
  const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[22m` : s);
  const frame = (s: string) => (color ? `\x1b[32m${s}\x1b[39m` : s);
  const p = info.password;
  const password =
    p.kind === "generated"
      ? [`Admin password (generated now): ${bold(p.password)}`, p.file ? `  also kept in ${p.file} (mode 0600): delete it once you have changed the password` : "  (it could not be written to the data directory: copy it now)"]
      : p.kind === "environment"
        ? ["Admin password: from KAIROS_ADMIN_PASSWORD"]
        : p.kind === "kept"
          ? [`Admin password: the one generated at the first start, kept in ${p.file}`, "  (if you changed it since, use yours; restart with KAIROS_ADMIN_PASSWORD=... to set a new one)"]
          : ["Admin password: the one printed at the first start (restart with KAIROS_ADMIN_PASSWORD=... to set a new one)"];
  const lines = [
    bold("Kairos dev is running"),
    `Console: ${info.url.replace(/\/graphql$/, "/")}   (log in as ${info.adminUser})`,
    `GraphQL (HTTP and WebSocket): ${info.url}`,
    `Data: ${info.dataDir}${info.embeddedMongo ? " (embedded MongoDB emulator)" : ""}${info.inMemoryQueues ? ", in-memory queues" : ""}`,
    `Log in:  mutation { login(username: "${info.adminUser}", password: "…") { token } }`,
    ...password,
  ];
  const rule = frame("=".repeat(78));
  return ["", rule, ...lines.map((l) => `  ${l}`), rule, ""].join("\n") + "\n";
}

/**
 * Binding a server to its port. When the address cannot be had (taken, a privileged port, a host
 * that is not this machine's) the caller gets a ListenError that says which and why, so the role
 * that owns the setting can name it (KAIROS_PORT / --port) instead of a stack trace.
 */
import type { Server } from "node:net";

/** The port or address could not be bound; `message` names it and the cause, for people. */
export class ListenError extends Error {
  override readonly name = "ListenError";
  constructor(
    message: string,
    readonly code: string,
    readonly port: number,
    readonly host: string,
  ) {
    super(message);
  }
}

function explain(code: string, port: number, host: string): string | null {
  switch (code) {
    case "EADDRINUSE":
      return `port ${port} on ${host} is already in use by another program`;
    case "EACCES":
      return `no permission to listen on port ${port} on ${host}${port < 1024 ? " (ports below 1024 need root)" : ""}`;
    case "EADDRNOTAVAIL":
      return `${host} is not an address of this machine, so port ${port} cannot be listened on there`;
    default:
      return null;
  }
}

/** A Node listen error (EADDRINUSE, EACCES, EADDRNOTAVAIL) as a ListenError; anything else as it is. */
export function asListenError(e: unknown, port: number, host: string): unknown {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const why = code ? explain(code, port, host) : null;
  return why ? new ListenError(why, code!, port, host) : e;
}

/** `server.listen(port, host)`, resolved once listening; a bind failure rejects with a ListenError. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => reject(asListenError(e, port, host));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

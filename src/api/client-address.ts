/**
 * The client address that per-address limits (login protection, anonymous request budgets) key
 * on, the same for HTTP requests and WebSocket upgrades. With `trustedHops` = 0 it is the TCP peer;
 * behind N trusted proxies it is the address N hops back in X-Forwarded-For (what the nearest
 * trusted proxy saw), as Express's numeric `trust proxy` setting would pick. Addresses further
 * left are client-supplied and never trusted.
 */
import type { IncomingMessage } from "node:http";

export function clientAddress(req: IncomingMessage, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? "unknown";
  if (trustedHops <= 0) return peer;
  const header = req.headers["x-forwarded-for"];
  const forwarded = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  // Nearest first: the peer, then X-Forwarded-For read from the right.
  const chain = [peer, ...forwarded.reverse()];
  return chain[Math.min(trustedHops, chain.length - 1)]!;
}

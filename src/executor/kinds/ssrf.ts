/**
 * Where HTTP jobs may connect (SSRF protection), with request-filtering-agent: every address a
 * connection goes to, an IP literal or each address a host name resolves to, is checked when the
 * socket connects (so a name that resolves to a private address is refused too, and DNS
 * rebinding cannot slip one in between a check and the connect). Refused: loopback, link-local
 * (169.254.0.0/16, the cloud metadata address among them), private, unique-local, multicast,
 * unspecified and every other non-unicast range, and this node's own addresses; unless an admin
 * allows a range (KAIROS_HTTP_JOB_ALLOWED_CIDRS, e.g. for a trusted internal target or tests).
 * Redirects are not followed, so they cannot lead past the check either.
 */
import { networkInterfaces } from "node:os";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";

export interface HttpTargetRules {
  /** CIDRs (or single addresses) requests may go to whatever else says. @default none */
  allowedCidrs: readonly string[];
  /** CIDRs refused on top of the built-in rules (the cluster's own public addresses). @default none */
  deniedCidrs: readonly string[];
}

export interface HttpAgents {
  http: RequestFilteringHttpAgent;
  https: RequestFilteringHttpsAgent;
  destroy(): void;
}

/** This host's own interface addresses: a job must not reach the node it runs on by any of them. */
function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => i.address.split("%")[0]!);
}

export function httpAgents(rules: HttpTargetRules): HttpAgents {
  const options = {
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    allowIPAddressList: [...rules.allowedCidrs],
    denyIPAddressList: [...ownAddresses().filter((a) => !rules.allowedCidrs.includes(a)), ...rules.deniedCidrs],
    // Sockets are kept between requests to the same host and port (the check ran when each was opened).
    keepAlive: true,
    maxFreeSockets: 64,
  };
  const http = new RequestFilteringHttpAgent(options);
  const https = new RequestFilteringHttpsAgent(options);
  return {
    http,
    https,
    destroy: () => {
      http.destroy();
      https.destroy();
    },
  };
}

/** The agent's refusal, as a run's error says it (null: not a refusal). */
export function ssrfRefusal(e: Error): string | null {
  const m = /DNS lookup (\S+)\(family:[^,]*, host:([^)]*)\) is not allowed\. Because,? (.*)$/.exec(e.message);
  if (!m) return null;
  const [, address, host, why] = m;
  const target = host && host !== "undefined" && host !== address ? `${host} (${address})` : address;
  const reason = /denyIPAddressList/.test(why!) ? "it is one of this cluster's own addresses" : /meta/i.test(why!) ? "it is an unspecified address" : "it is not a public address (loopback, private, link-local, unique-local, multicast or reserved)";
  return `refused to connect to ${target}: ${reason}. HTTP jobs may reach public addresses only; an admin can allow a range with KAIROS_HTTP_JOB_ALLOWED_CIDRS`;
}

/**
 * Where HTTP jobs and alert webhooks may connect (SSRF protection), with request-filtering-agent: every address a
 * connection goes to, an IP literal or each address a host name resolves to, is checked when the
 * socket connects (so a name that resolves to a private address is refused too, and DNS
 * rebinding cannot slip one in between a check and the connect). Refused: loopback, link-local
 * (169.254.0.0/16, the cloud metadata address among them), private, unique-local, multicast,
 * unspecified and every other non-unicast range, unless an admin allows a range
 * (KAIROS_HTTP_JOB_ALLOWED_CIDRS for HTTP jobs, KAIROS_ALERT_ALLOWED_CIDRS for alert webhooks, e.g.
 * for a trusted internal target or tests); and, allowed or
 * not, KAIROS_HTTP_JOB_DENIED_CIDRS and this node's own addresses (unless one is named exactly).
 * Redirects are not followed, so they cannot lead past the check either. The same agents are asked
 * about a URL before any request is made (urlRefusal: an alert rule's webhook, as it is saved), so
 * one check decides both.
 */
import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from "node:dns";
import { BlockList, isIP, Socket, type TcpNetConnectOpts } from "node:net";
import { networkInterfaces } from "node:os";
import type { Duplex } from "node:stream";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";

export interface HttpTargetRules {
  /** CIDRs (or single addresses) requests may go to although not public. @default none */
  allowedCidrs: readonly string[];
  /** CIDRs refused whatever else says, inside an allowed range too (the cluster's own addresses). @default none */
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

function addTo(list: BlockList, cidr: string): void {
  const [address, bits] = cidr.trim().split("/") as [string, string | undefined];
  const v = isIP(address);
  if (v === 0) throw new Error(`"${cidr}" is not an address or CIDR`);
  const type = v === 4 ? "ipv4" : "ipv6";
  if (bits === undefined) list.addAddress(address, type);
  else list.addSubnet(address, Number(bits), type);
}

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) addTo(list, c);
  return list;
}

const familyOf = (address: string) => (isIP(address) === 6 ? "ipv6" : "ipv4");

/**
 * What no job may reach, checked before request-filtering-agent's rules (whose allow list wins
 * over its deny list): the denied CIDRs, and this node's own addresses unless an admin names one
 * exactly (an address, or a /32 or /128 of it: `127.0.0.1/32` for a receiver on the node itself).
 * A range that merely covers the node (`10.0.0.0/8` for an internal receiver) does not open it.
 */
function deniedList(rules: HttpTargetRules): BlockList {
  const exact = blockList(rules.allowedCidrs.filter((c) => !c.includes("/") || /\/(32|128)$/.test(c.trim())));
  const own = ownAddresses().filter((a) => isIP(a) !== 0 && !exact.check(a, familyOf(a)));
  return blockList([...rules.deniedCidrs, ...own]);
}

/** The refusal, worded as request-filtering-agent words its own (ssrfRefusal reads both). */
function deniedError(address: string, family: number | string | undefined, host: string): Error {
  return new Error(`DNS lookup ${address}(family:${family}, host:${host}) is not allowed. Because It is defined in denyIPAddressList.`);
}

type Lookup = NonNullable<TcpNetConnectOpts["lookup"]>;

/** A DNS lookup that fails when any address a name resolves to is denied. */
function denyingLookup(denied: BlockList): Lookup {
  return ((hostname: string, options: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return cb(err);
      const bad = addresses.find((a) => denied.check(a.address, familyOf(a.address)));
      if (bad) return cb(deniedError(bad.address, bad.family, hostname));
      if (options.all) return cb(null, addresses);
      cb(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as unknown as Lookup;
}

/** `createConnection` that refuses a denied IP literal at once and resolves names through `lookup`. */
function denyFirst(
  denied: BlockList,
  lookup: Lookup,
  next: (options: TcpNetConnectOpts, cb?: (error: Error | null, socket: Duplex) => void) => Duplex,
) {
  return (options: TcpNetConnectOpts, cb?: (error: Error | null, socket: Duplex) => void): Duplex => {
    const host = options.host;
    if (host !== undefined && isIP(host) !== 0 && denied.check(host, familyOf(host))) {
      const socket = new Socket();
      const error = deniedError(host, isIP(host), host);
      if (cb) cb(error, socket);
      else socket.destroy(error);
      return socket;
    }
    return next({ ...options, lookup }, cb);
  };
}

class DenyFirstHttpAgent extends RequestFilteringHttpAgent {
  constructor(
    options: ConstructorParameters<typeof RequestFilteringHttpAgent>[0],
    private readonly deny: { list: BlockList; lookup: Lookup },
  ) {
    super(options);
  }
  override createConnection(options: TcpNetConnectOpts, cb?: (error: Error | null, socket: Duplex) => void) {
    return denyFirst(this.deny.list, this.deny.lookup, (o, c) => super.createConnection(o, c))(options, cb) as ReturnType<RequestFilteringHttpAgent["createConnection"]>;
  }
}

class DenyFirstHttpsAgent extends RequestFilteringHttpsAgent {
  constructor(
    options: ConstructorParameters<typeof RequestFilteringHttpsAgent>[0],
    private readonly deny: { list: BlockList; lookup: Lookup },
  ) {
    super(options);
  }
  override createConnection(options: TcpNetConnectOpts, cb?: (error: Error | null, socket: Duplex) => void) {
    return denyFirst(this.deny.list, this.deny.lookup, (o, c) => super.createConnection(o, c))(options, cb) as ReturnType<RequestFilteringHttpsAgent["createConnection"]>;
  }
}

export function httpAgents(rules: HttpTargetRules): HttpAgents {
  const list = deniedList(rules);
  const deny = { list, lookup: denyingLookup(list) };
  const options = {
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    allowIPAddressList: [...rules.allowedCidrs],
    // Denied addresses are refused before these rules run (deniedList): the agent's own deny list
    // would lose to its allow list.
    denyIPAddressList: [],
    // Sockets are kept between requests to the same host and port (the check ran when each was opened).
    keepAlive: true,
    maxFreeSockets: 64,
  };
  const http = new DenyFirstHttpAgent(options, deny);
  const https = new DenyFirstHttpsAgent(options, deny);
  return {
    http,
    https,
    destroy: () => {
      http.destroy();
      https.destroy();
    },
  };
}

/** What an agent's refusal says: the address refused, the name it came from (if any), and why. */
function refusalParts(e: Error): { address: string; host: string | null; reason: string } | null {
  const m = /DNS lookup (\S+)\(family:[^,]*, host:([^)]*)\) is not allowed\. Because,? (.*)$/.exec(e.message);
  if (!m) return null;
  const [, address, host, why] = m;
  const exact = `${address}/${isIP(address!) === 6 ? 128 : 32}`;
  const reason = /denyIPAddressList/.test(why!) ? `it is one of this cluster's own addresses or a denied one (an own address is opened only by naming it exactly, as ${exact})` : /meta/i.test(why!) ? "it is an unspecified address" : "it is not a public address (loopback, private, link-local, unique-local, multicast or reserved)";
  return { address: address!, host: host && host !== "undefined" && host !== address ? host : null, reason };
}

/**
 * The agent's refusal, as a run's (or an alert delivery's) error says it (null: not a refusal).
 * `who` and `setting`: what may reach public addresses only, and the setting that opens a range.
 */
export function ssrfRefusal(e: Error, who = "HTTP jobs", setting = "KAIROS_HTTP_JOB_ALLOWED_CIDRS"): string | null {
  const p = refusalParts(e);
  if (!p) return null;
  return `refused to connect to ${p.host ? `${p.host} (${p.address})` : p.address}: ${p.reason}. ${who} may reach public addresses only; an admin can allow a range with ${setting}`;
}

/**
 * Whether the agents would connect to `address` (an IP literal), decided by the agents themselves
 * (the denied ranges and this node's own addresses, then request-filtering-agent's rules) and
 * asked without connecting: a refused connection is answered at once, through the callback, and
 * an allowed one is closed before it is made (a connection to an IP literal starts on the next
 * tick, and never for a socket destroyed before it). The refusal, or null.
 */
function refusalOf(agents: HttpAgents, address: string): Error | null {
  let refused = null as Error | null;
  const socket = agents.http.createConnection({ host: address, port: 9 }, (e) => {
    if (e) refused = e;
  });
  socket.destroy();
  return refused;
}

/** How long a name's lookup may take when a URL is checked ahead; past it the name is not refused then. */
const LOOKUP_TIMEOUT_MS = 2_000;

/** Every address `host` resolves to now; none when it does not resolve (or not in time). */
async function addressesOf(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LookupAddress[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const found = await Promise.race([dnsPromises.lookup(host, { all: true }).catch(() => []), late]);
    return found.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why a request to `url` would be refused by `agents`, told before any is made (when a URL is
 * saved): its IP literal, or each address its host name resolves to now, judged by the agents'
 * own check (refusalOf); null when none is refused. A name that does not resolve now is not
 * refused here, and every request is checked again when it connects (a name may resolve elsewhere
 * by then). `who` and `setting` as for ssrfRefusal.
 */
export async function urlRefusal(agents: HttpAgents, url: string, who: string, setting: string): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  for (const address of isIP(host) !== 0 ? [host] : await addressesOf(host)) {
    const refused = refusalOf(agents, address);
    const p = refused && refusalParts(refused);
    if (!p) continue;
    const target = address === host ? `${address} is refused` : `${host} resolves to ${address}, which is refused`;
    return `${target}: ${p.reason}. ${who} may reach public addresses only; an admin can allow a range with ${setting}`;
  }
  return null;
}

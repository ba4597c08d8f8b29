/**
 * Outbound network access for runs that ask for it (`spec.network: EGRESS`), opt-in per node with
 * `KAIROS_EGRESS_SUBNET`.
 *
 * Each slot has a network namespace of its own, made once at start: a veth pair to the host, a
 * /30 of the subnet, a default route through the host, IPv6 off, and the host masquerading its
 * traffic out. Firewall rules (one chain per subnet) drop everything such a namespace sends to the
 * host itself (any of its addresses: MongoDB, Redis, the API, metrics, whatever listens on it),
 * to the other slots, and to the denied ranges (by default every private, link-local and shared
 * range, so neither the cluster's own network nor a cloud metadata service is reachable). A run
 * without EGRESS never enters these namespaces: bubblewrap gives it one with only loopback.
 *
 * The names derive from the subnet, so an executor restarted after a crash replaces what its
 * predecessor left. One subnet per executor per host.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";

export const DEFAULT_EGRESS_DENY = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4"];

export interface EgressOptions {
  /** An IPv4 /16 to carve the slots' /30s from, e.g. 10.231.0.0/16. */
  subnet: string;
  /** Destinations (CIDR) no run may reach. */
  deny: readonly string[];
  slots: number;
}

const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"];
const IPTABLES = ["/usr/sbin/iptables", "/sbin/iptables", "/usr/bin/iptables"];
const NSENTER = ["/usr/bin/nsenter", "/bin/nsenter"];
const find = (paths: string[]) => paths.find((p) => existsSync(p)) ?? null;

function parseSubnet(subnet: string): [number, number] {
  const m = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.exec(subnet.trim());
  if (!m || Number(m[1]) > 255 || Number(m[2]) > 255) throw new Error(`KAIROS_EGRESS_SUBNET: "${subnet}" is not an IPv4 /16 like 10.231.0.0/16`);
  return [Number(m[1]), Number(m[2])];
}

export class EgressNetworks {
  private constructor(
    private readonly ip: string,
    private readonly iptables: string,
    readonly nsenter: string,
    private readonly prefix: string,
    private readonly o: EgressOptions,
  ) {}

  /** Sets the slots' namespaces and the firewall up, or says why it cannot. */
  static open(o: EgressOptions): { egress: EgressNetworks } | { egress: null; reason: string } {
    if (process.getuid?.() !== 0) return { egress: null, reason: "EGRESS needs the executor to run as root (network namespaces, veth pairs, firewall rules)" };
    const ip = find(IP);
    const iptables = find(IPTABLES);
    const nsenter = find(NSENTER);
    if (!ip || !iptables || !nsenter) return { egress: null, reason: "EGRESS needs ip (iproute2), iptables and nsenter (util-linux) on the node" };
    let a: number, b: number;
    try {
      [a, b] = parseSubnet(o.subnet);
    } catch (e) {
      return { egress: null, reason: (e as Error).message };
    }
    if (o.slots > 16_384) return { egress: null, reason: "EGRESS supports at most 16384 slots per node" };
    const net = new EgressNetworks(ip, iptables, nsenter, `${a}-${b}`, o);
    try {
      net.teardown();
      net.setup(a, b);
      return { egress: net };
    } catch (e) {
      net.teardown();
      return { egress: null, reason: `EGRESS could not be set up: ${(e as Error).message.split("\n")[0]}` };
    }
  }

  private chain(): string {
    return `KAIROS-EGRESS-${this.prefix}`;
  }

  private nsName(slot: number): string {
    return `kairos-${this.prefix}-${slot}`;
  }

  /** The namespace a slot's EGRESS runs join (`nsenter --net=`). */
  nsPath(slot: number): string {
    return `/run/netns/${this.nsName(slot)}`;
  }

  private run(cmd: string, args: string[]): void {
    execFileSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
  }

  private quiet(cmd: string, args: string[]): void {
    try {
      this.run(cmd, args);
    } catch {
      // not there
    }
  }

  private setup(a: number, b: number): void {
    const { ip, iptables } = this;
    const subnet = `${a}.${b}.0.0/16`;
    const addr = (slot: number, host: 1 | 2) => `${a}.${b}.${Math.floor((slot * 4) / 256)}.${((slot * 4) % 256) + host}`;
    for (let slot = 0; slot < this.o.slots; slot++) {
      const ns = this.nsName(slot);
      const host = `kx${this.prefix.replace("-", "x")}h${slot}`.slice(0, 15);
      this.run(ip, ["netns", "add", ns]);
      this.run(ip, ["link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns]);
      this.run(ip, ["addr", "add", `${addr(slot, 1)}/30`, "dev", host]);
      this.run(ip, ["link", "set", host, "up"]);
      this.run(ip, ["-n", ns, "addr", "add", `${addr(slot, 2)}/30`, "dev", "eth0"]);
      this.run(ip, ["-n", ns, "link", "set", "lo", "up"]);
      this.run(ip, ["-n", ns, "link", "set", "eth0", "up"]);
      this.run(ip, ["-n", ns, "route", "add", "default", "via", addr(slot, 1)]);
      this.quiet(ip, ["netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]);
    }
    writeFileSync("/proc/sys/net/ipv4/ip_forward", "1\n");
    const chain = this.chain();
    this.run(iptables, ["-w", "-N", chain]);
    for (const cidr of [subnet, ...this.o.deny]) this.run(iptables, ["-w", "-A", chain, "-d", cidr, "-j", "DROP"]);
    this.run(iptables, ["-w", "-A", chain, "-j", "ACCEPT"]);
    // Nothing from a slot reaches the host itself, on any of its addresses.
    this.run(iptables, ["-w", "-I", "INPUT", "-s", subnet, "-j", "DROP"]);
    this.run(iptables, ["-w", "-I", "FORWARD", "-s", subnet, "-j", chain]);
    this.run(iptables, ["-w", "-I", "FORWARD", "-d", subnet, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"]);
    this.run(iptables, ["-w", "-t", "nat", "-A", "POSTROUTING", "-s", subnet, "!", "-d", subnet, "-j", "MASQUERADE"]);
  }

  /** Removes the namespaces and rules of this subnet (also a crashed predecessor's). */
  teardown(): void {
    const { ip, iptables } = this;
    const [a, b] = this.prefix.split("-");
    const subnet = `${a}.${b}.0.0/16`;
    for (let slot = 0; slot < this.o.slots; slot++) this.quiet(ip, ["netns", "del", this.nsName(slot)]);
    const chain = this.chain();
    for (let i = 0; i < 4; i++) {
      this.quiet(iptables, ["-w", "-D", "INPUT", "-s", subnet, "-j", "DROP"]);
      this.quiet(iptables, ["-w", "-D", "FORWARD", "-s", subnet, "-j", chain]);
      this.quiet(iptables, ["-w", "-D", "FORWARD", "-d", subnet, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"]);
      this.quiet(iptables, ["-w", "-t", "nat", "-D", "POSTROUTING", "-s", subnet, "!", "-d", subnet, "-j", "MASQUERADE"]);
    }
    this.quiet(iptables, ["-w", "-F", chain]);
    this.quiet(iptables, ["-w", "-X", chain]);
  }
}

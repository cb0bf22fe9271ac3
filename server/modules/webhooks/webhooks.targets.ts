/**
 * Where a webhook may be sent (docs/webhooks.md#endpoint-urls): the rules for an endpoint's URL,
 * checked when it is saved, and the address rule, checked again on every connection the delivery
 * worker opens (the `lookup` below), so a name that resolved to a public address when saved and
 * to a private one later (DNS rebinding) is still refused.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface WebhookTargetRules {
  /** Production: only https, and no loopback, private or link-local addresses unless allowed. */
  production: boolean;
  /** Host names (lower case) allowed to resolve to refused addresses (`WEBHOOK_ALLOWED_HOSTS`). */
  allowedHosts: readonly string[];
  /**
   * How a host is resolved (default: the system's resolver, all addresses), when an endpoint is
   * saved and on every connection a delivery opens; tests give their own.
   */
  resolveHost?: (host: string) => Promise<LookupAddress[]>;
}

/**
 * IPv4 blocks a webhook must not reach in production (docs/webhooks.md#endpoint-urls): every
 * block of the IANA IPv4 Special-Purpose Address Registry (version of 2020-09-04) whose
 * "Globally Reachable" is False, with 192.0.0.0/24 refused whole (its two globally reachable
 * anycast addresses, PCP and TURN, are no webhook receivers), the deprecated 6to4 relay anycast
 * block (RFC 7526), and multicast, which that registry leaves to another.
 */
const REFUSED_IPV4: readonly (readonly [network: string, prefix: number, name: string])[] = [
  ['0.0.0.0', 8, '"this network" (RFC 791)'],
  ['10.0.0.0', 8, 'private use (RFC 1918)'],
  ['100.64.0.0', 10, 'shared address space, carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback (RFC 1122)'],
  ['169.254.0.0', 16, 'link-local, cloud metadata services (RFC 3927)'],
  ['172.16.0.0', 12, 'private use (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (RFC 6890): DS-Lite, dummy, NAT64 discovery...'],
  ['192.0.2.0', 24, 'documentation, TEST-NET-1 (RFC 5737)'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0', 16, 'private use (RFC 1918)'],
  ['198.18.0.0', 15, 'benchmarking (RFC 2544)'],
  ['198.51.100.0', 24, 'documentation, TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0', 24, 'documentation, TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0', 4, 'multicast (RFC 5771)'],
  ['240.0.0.0', 4, 'reserved (RFC 1112), the limited broadcast address (RFC 919) included'],
];

/**
 * IPv6 blocks refused likewise: every block of the IANA IPv6 Special-Purpose Address Registry
 * (version of 2024-10-22) whose "Globally Reachable" is False, but IPv4-mapped ::ffff:0:0/96,
 * judged below by the IPv4 address it maps (a socket connects to that address itself); 2001::/23
 * refused whole (Teredo, "N/A", carries IPv4 addresses; its globally reachable blocks are
 * anycast and overlay services, no webhook receivers); and what that registry leaves out:
 * deprecated site-local (RFC 3879), multicast (RFC 4291) and IPv4-compatible (deprecated, RFC 4291).
 */
const REFUSED_IPV6: readonly (readonly [network: string, prefix: number, name: string])[] = [
  ['::', 128, 'unspecified (RFC 4291)'],
  ['::1', 128, 'loopback (RFC 4291)'],
  ['::', 96, 'deprecated IPv4-compatible (RFC 4291)'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation (RFC 8215)'],
  ['100::', 64, 'discard-only (RFC 6666)'],
  ['100:0:0:1::', 64, 'dummy IPv6 prefix (RFC 9780)'],
  ['2001::', 23, 'IETF protocol assignments (RFC 2928): Teredo, benchmarking, ORCHID...'],
  ['2001:db8::', 32, 'documentation (RFC 3849)'],
  ['3fff::', 20, 'documentation (RFC 9637)'],
  ['5f00::', 16, 'segment routing SIDs (RFC 9602)'],
  ['fc00::', 7, 'unique local (RFC 4193)'],
  ['fe80::', 10, 'link-local (RFC 4291)'],
  ['fec0::', 10, 'deprecated site-local (RFC 3879)'],
  ['ff00::', 8, 'multicast (RFC 4291)'],
];

/** The 16 bits of IPv6 text that hold octets `high` and `low` of an IPv4 address. */
const hextet = (high: number, low: number): string => ((high << 8) | low).toString(16);

/**
 * Addresses a webhook must not reach in production. IPv6 prefixes that carry an IPv4 address a
 * gateway or the socket itself goes to are judged by that address, so each refused IPv4 block is
 * refused inside them too: IPv4-mapped ::ffff:0:0/96 (RFC 4291), IPv4-translated ::ffff:0:0:0/96
 * (RFC 2765), the well-known NAT64 prefix 64:ff9b::/96 (RFC 6052, globally reachable itself) and
 * 6to4 2002::/16 (RFC 3056, bits 16-47). So `::ffff:0:7f00:1` is 127.0.0.1, and `64:ff9b::` of a
 * public address stays deliverable from an IPv6-only network.
 */
const refused = new BlockList();
for (const [network, prefix] of REFUSED_IPV4) {
  refused.addSubnet(network, prefix, 'ipv4');
  refused.addSubnet(`::ffff:${network}`, 96 + prefix, 'ipv6');
  refused.addSubnet(`::ffff:0:${network}`, 96 + prefix, 'ipv6');
  refused.addSubnet(`64:ff9b::${network}`, 96 + prefix, 'ipv6');
  const [a = 0, b = 0, c = 0, d = 0] = network.split('.').map(Number);
  refused.addSubnet(`2002:${hextet(a, b)}:${hextet(c, d)}::`, 16 + prefix, 'ipv6');
}
for (const [network, prefix] of REFUSED_IPV6) refused.addSubnet(network, prefix, 'ipv6');

/** `::ffff:10.0.0.1` is 10.0.0.1: an IPv4-mapped address is judged as the IPv4 one it maps. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Whether `address` (an IP literal) is loopback, private, link-local or otherwise not globally reachable; anything else is refused too. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  return family === 0 || refused.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A host name without the brackets of an IPv6 literal, in lower case. */
export const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();

const isLoopbackName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost');

/** Whether `host` is loopback by name or literal (`localhost`, 127.0.0.1, ::1). */
export function isLoopbackHost(host: string): boolean {
  if (isLoopbackName(host)) return true;
  if (isIP(host) === 0) return false;
  const { address, family } = unmapped(host);
  return family === 'ipv4' ? address.startsWith('127.') : address === '::1';
}

/** Whether `host` may resolve to refused addresses under `rules`: outside production, or named in WEBHOOK_ALLOWED_HOSTS. */
const mayBePrivate = (rules: WebhookTargetRules, host: string): boolean => !rules.production || rules.allowedHosts.includes(host);

/**
 * What is wrong with `text` as an endpoint URL, without resolving it; undefined when nothing is.
 * https, or http to a loopback host outside production; no credentials, no fragment.
 */
export function urlProblem(text: string, rules: WebhookTargetRules): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL such as https://hooks.example.com/orders';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  const host = bareHost(url.hostname);
  if (url.protocol === 'http:' && (rules.production || !isLoopbackHost(host))) {
    return rules.production ? 'must be an https URL' : 'must be an https URL (http only to a loopback host such as 127.0.0.1, outside production)';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@); the signature authenticates the sender';
  // `new URL` drops an empty fragment (`https://a/#`), so the text is looked at.
  if (text.includes('#')) return 'must not contain a fragment (#...)';
  if (isIP(host) !== 0 && isRefusedAddress(host) && !mayBePrivate(rules, host)) return 'must not target a loopback, private or link-local address';
  return undefined;
}

/** The addresses `host` resolves to (all of them), or the resolver's error. */
function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * What is wrong with where `text` resolves to (production: any refused address, unless the host
 * is allowed); undefined when nothing is. Called after `urlProblem` found nothing.
 */
export async function addressProblem(text: string, rules: WebhookTargetRules): Promise<string | undefined> {
  const host = bareHost(new URL(text).hostname);
  if (mayBePrivate(rules, host) || isIP(host) !== 0) return undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await (rules.resolveHost ?? resolveAll)(host);
  } catch {
    return `must name a host that resolves; ${host} does not`;
  }
  if (addresses.some((entry) => isRefusedAddress(entry.address))) return `must not target a loopback, private or link-local address (${host} resolves to one; WEBHOOK_ALLOWED_HOSTS can allow it)`;
  return undefined;
}

/** The error a refused connection fails with: the delivery records its message. */
/** Its message is shown to webhook managers (a delivery's `last_error`): it names no internal address. */
export class RefusedAddressError extends Error {
  constructor(host: string) {
    super(`refused: ${host} resolves to a loopback, private or link-local address`);
    this.name = 'RefusedAddressError';
  }
}

/**
 * A `lookup` for node:http(s) that resolves as usual and refuses, under `rules`, a host that
 * resolves to a refused address: the check is made on the very addresses the socket connects to.
 * (An IP literal is never looked up; the worker checks those with `urlProblem` first.)
 */
export function guardedLookup(rules: WebhookTargetRules): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (error: Error | null, addresses: LookupAddress[]): void => {
      if (error) return callback(error, '', 0);
      const host = bareHost(hostname);
      const bad = addresses.find((entry) => isRefusedAddress(entry.address));
      if (bad && !mayBePrivate(rules, host)) return callback(new RefusedAddressError(host), '', 0);
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${host} resolved to no address`), '', 0);
      callback(null, first.address, first.family);
    };
    if (rules.resolveHost) {
      rules.resolveHost(hostname).then(
        (addresses) => answer(null, addresses),
        (error: unknown) => answer(error instanceof Error ? error : new Error(`${hostname} does not resolve`), []),
      );
    } else {
      dnsLookup(hostname, { ...options, all: true }, answer);
    }
  };
}

/** What the webhook endpoints' procedures need: the target rules and the most endpoints (`WEBHOOK_MAX_ENDPOINTS`). */
export interface WebhookEndpointSettings extends WebhookTargetRules {
  maxEndpoints: number;
}


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
}

/** Addresses a webhook must not reach in production: loopback, private, link-local and the like. */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  // Prefixes that carry an IPv4 address inside, which a gateway may route to it (a private one
  // included): IPv4-compatible, NAT64 (well-known and local-use), 6to4, Teredo; and discard-only.
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001::', 32],
  ['100::', 64],
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

/** `::ffff:10.0.0.1` is 10.0.0.1: an IPv4-mapped address is judged as the IPv4 one it maps. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Whether `address` (an IP literal) is loopback, private, link-local or otherwise not public. */
export function isRefusedAddress(address: string): boolean {
  const { address: plain, family } = unmapped(address);
  return refused.check(plain, family);
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
export async function addressProblem(text: string, rules: WebhookTargetRules & Pick<WebhookEndpointSettings, 'resolveHost'>): Promise<string | undefined> {
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
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const host = bareHost(hostname);
      const bad = addresses.find((entry) => isRefusedAddress(entry.address));
      if (bad && !mayBePrivate(rules, host)) return callback(new RefusedAddressError(host), '', 0);
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${host} resolved to no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** What the webhook endpoints' procedures need: the target rules and the most endpoints (`WEBHOOK_MAX_ENDPOINTS`). */
export interface WebhookEndpointSettings extends WebhookTargetRules {
  maxEndpoints: number;
  /** How a saved URL's host is resolved (default: the system's resolver, all addresses); tests give their own. */
  resolveHost?: (host: string) => Promise<LookupAddress[]>;
}

/** Outside production, 16 endpoints: tests and scripts that give none. */
export const defaultWebhookEndpointSettings: WebhookEndpointSettings = { production: false, allowedHosts: [], maxEndpoints: 16 };

/**
 * Client addresses as the service counts them: which proxies to believe (`TRUST_PROXY`), and the
 * key a client address is counted under by the rate limits and the sign-in backoff.
 */
import { isIP, isIPv4 } from 'node:net';

/**
 * Which `X-Forwarded-For` entries to believe: `false` none (the socket's address is the client's);
 * a number, how many proxies in front of the service append to it (the client is that many entries
 * from the right, whatever the client wrote further left); a list, the proxies' own addresses or
 * CIDR ranges (and proxy-addr's names `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = false | number | string[];

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Whether `entry` is an address, a CIDR range or a name that proxy-addr (Fastify's) understands. */
export function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * What Fastify's `trustProxy` gets. A hop count becomes a function: Fastify 5 answers a number by
 * trusting nothing (it cannot check the nearest peer), and `true` would trust every entry,
 * including the leftmost one the client writes itself. proxy-addr calls it with each address from
 * the socket's (hop 0) leftwards.
 */
export function fastifyTrustProxy(trust: TrustProxy | boolean | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === undefined || trust === false || trust === 0) return false;
  if (Array.isArray(trust)) return trust.length === 0 ? false : trust;
  const hops = trust === true ? 1 : trust;
  return (_address, hop) => hop < hops;
}

/** The 16-bit groups of an IPv6 address (zone dropped, a trailing dotted IPv4 read as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] ?? '';
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16) || 0);
}

/**
 * The key a client address is counted under: an IPv4 address itself (also when it arrives
 * IPv4-mapped, `::ffff:192.0.2.1`), an IPv6 address by its /64, the smallest network a host is
 * usually given (so one host cannot get fresh counters by changing its interface identifier).
 */
export function addressKey(address: string): string {
  if (isIPv4(address) || isIP(address.split('%')[0] ?? '') !== 6) return address;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

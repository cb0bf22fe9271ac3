/**
 * Client addresses behind proxies (TRUST_PROXY) and IPv6 clients: the per-address limits (the
 * /oauth limit and the service-wide one) count the address the trusted proxy saw, never an entry
 * the client wrote into X-Forwarded-For itself, and an IPv6 client by its /64.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp, type AppOptions } from '../../server/app.ts';
import { addressKey, fastifyTrustProxy, isProxyEntry } from '../../server/lib/client-address.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';

const LIMIT = 3;

/** Whether an answer is the per-address limit's refusal. */
const refused = (status: number): boolean => status === 429;

async function limitedApp(trustProxy: AppOptions['trustProxy']): Promise<FastifyInstance> {
  const app = await buildApp({
    database: await createTestDatabase(),
    tokens: new TokenService(TEST_JWT),
    ...(trustProxy === undefined ? {} : { trustProxy }),
    rateLimit: { max: LIMIT, timeWindow: '1 minute' },
    oauth: { rateLimit: { max: LIMIT, timeWindow: '1 minute' } },
  });
  await app.ready();
  return app;
}

/** A token request (refused: no client) through a proxy at `remoteAddress` that sent `forwardedFor`. */
const tokenRequest = (forwardedFor: string | undefined, remoteAddress = '127.0.0.1'): InjectOptions => ({
  method: 'POST',
  url: '/oauth/token',
  remoteAddress,
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
  payload: 'grant_type=client_credentials',
});

const apiRequest = (forwardedFor: string | undefined, remoteAddress = '127.0.0.1'): InjectOptions => ({
  method: 'GET',
  url: '/api/v1/products',
  remoteAddress,
  headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
});

describe('TRUST_PROXY=true believes only the nearest proxy (one hop)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await limitedApp(true);
  });
  afterAll(() => app?.close());

  it('a forged leftmost X-Forwarded-For entry does not give fresh /oauth counts: the 4th request is 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) {
      // The client wrote `198.18.0.<i>`; the proxy appended the address it saw, 203.0.113.7.
      statuses.push((await app.inject(tokenRequest(`198.18.0.${i}, 203.0.113.7`))).statusCode);
    }
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
    // Another client behind the same proxy has counts of its own.
    expect((await app.inject(tokenRequest('203.0.113.8'))).statusCode).not.toBe(429);
  });

  it('nor on the service-wide limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await app.inject(apiRequest(`198.18.1.${i}, 203.0.113.20`))).statusCode);
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
  });

  it('the rightmost entry is the client, however many the client wrote; without the header, the proxy itself', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await app.inject(tokenRequest(`1.1.1.${i}, 2.2.2.${i}, 203.0.113.9`))).statusCode);
    statuses.push((await app.inject(tokenRequest('203.0.113.9'))).statusCode);
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
    expect((await app.inject(tokenRequest(undefined))).statusCode).not.toBe(429);
  });
});

describe('TRUST_PROXY as a list of proxy addresses and ranges', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // The load balancer at 127.0.0.1, and a CDN edge inside 10.0.0.0/8 in front of it.
    app = await limitedApp(['127.0.0.1', '10.0.0.0/8']);
  });
  afterAll(() => app?.close());

  it('the client is the first address from the right that is not a trusted proxy', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await app.inject(tokenRequest(`198.18.2.${i}, 198.51.100.4, 10.1.2.3`))).statusCode);
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
  });

  it('a request from an address that is not a trusted proxy is counted by that address, its header ignored', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await app.inject(tokenRequest(`198.18.3.${i}`, '192.0.2.50'))).statusCode);
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
  });
});

describe('an IPv6 client is counted by its /64', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await limitedApp(undefined);
  });
  afterAll(() => app?.close());

  it('other interface identifiers in the same /64 share the /oauth limit; another /64 does not', async () => {
    const statuses: number[] = [];
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:0db8:0001:0002::9']) {
      statuses.push((await app.inject(tokenRequest(undefined, address))).statusCode);
    }
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
    expect((await app.inject(tokenRequest(undefined, '2001:db8:1:3::1'))).statusCode).not.toBe(429);
  });

  it('and the service-wide limit', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= LIMIT + 1; i++) statuses.push((await app.inject(apiRequest(undefined, `2001:db8:9:9::${i.toString(16)}`))).statusCode);
    expect(statuses.map(refused)).toEqual([false, false, false, true]);
  });
});

describe('addressKey and the TRUST_PROXY forms', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::ffff:c000:201', '192.0.2.1'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:0:ffff::1', '2001:db8:0:0::/64'],
    ['2001:DB8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['not an address', 'not an address'],
  ])('%s is counted as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('proxy entries: addresses, CIDR ranges and proxy-addr names; nothing else', () => {
    for (const entry of ['10.0.0.1', '10.0.0.0/8', '::1', '2001:db8::/32', 'loopback', 'uniquelocal']) expect(isProxyEntry(entry)).toBe(true);
    for (const entry of ['10.0.0.0/33', '2001:db8::/129', 'proxy.example.com', '10.0.0', '*', '']) expect(isProxyEntry(entry)).toBe(false);
  });

  it('a hop count trusts that many addresses from the socket; true is one; false, 0 and none trust nothing', () => {
    const one = fastifyTrustProxy(true);
    expect(typeof one === 'function' && [one('127.0.0.1', 0), one('203.0.113.1', 1)]).toEqual([true, false]);
    const two = fastifyTrustProxy(2);
    expect(typeof two === 'function' && [two('x', 1), two('x', 2)]).toEqual([true, false]);
    expect([fastifyTrustProxy(false), fastifyTrustProxy(0), fastifyTrustProxy(undefined), fastifyTrustProxy([])]).toEqual([false, false, false, false]);
    expect(fastifyTrustProxy(['10.0.0.0/8'])).toEqual(['10.0.0.0/8']);
  });
});

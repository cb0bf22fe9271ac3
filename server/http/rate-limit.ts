/**
 * Rate limiting (docs/api.md#rate-limits): every request the app answers is counted against its caller
 * (`sub:<sub>` for a verified token, else `ip:<client address>`), and every response carries
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.
 *
 * `@fastify/rate-limit` does the counting. A limit is protection, not accounting
 * (docs/api.md#rate-limits): counting never costs a database write. Its store is the process's memory by default (each
 * instance counts on its own, so N instances give a caller up to N x the limit), or Redis when one
 * is configured: one limit shared by every instance, taken in leases so that a busy caller's
 * requests do not each wait for a round trip (server/http/rate-limit-store.ts). Its per-route
 * hooks cannot do the rest: they never run for answers given before the route (404 for unknown
 * paths, 401 for a bad token, 406) and they count a tRPC batch as one request. So the plugin is
 * registered with `global: false` and its documented manual limiter (`createRateLimit`, meant for
 * tRPC and GraphQL) is called from the app's onRequest hook, after the token is verified and
 * before anything is refused (and from the router's error handler, for the URLs it refuses before
 * any hook); this module adds only the headers, the weight of a batch, failing open, and a net for
 * answers refused before `count` ran.
 */
import rateLimitPlugin from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { DomainError } from '../errors/problems.ts';
import { addressKey } from '../lib/client-address.ts';
import { redisLeaseStore } from './rate-limit-store.ts';

export interface RateLimitOptions {
  /** Requests (tRPC calls) per window per caller. */
  max: number;
  /** Milliseconds, or a duration such as `'1 minute'`. */
  timeWindow: string | number;
  /** `redis://` or `rediss://`: counters in Redis, shared by every instance; in this process's memory otherwise. */
  redisUrl?: string | undefined;
}

/** `undefined`: counters in memory (nothing of their own to check); otherwise Redis's state. */
export type RateLimitStoreState = 'ok' | 'unavailable' | undefined;

export interface RateLimiter {
  /**
   * Counts the request (a tRPC batch counts each call), sets the RateLimit-* headers and throws the
   * 429 problem when the caller is past the limit. Call it once per request, in onRequest, after
   * the caller is known and before any refusal: a refused request still counts.
   */
  count(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** For health: whether the shared counter store answers. */
  storeState(): Promise<RateLimitStoreState>;
}

type Outcome = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;
type Counted = Extract<Outcome, { isAllowed: false }>;

const TRPC_PREFIX = '/trpc/';

/**
 * The calls a request makes: a tRPC batch (`/trpc/a,b,c?batch=1`) names each procedure in its
 * path, as tRPC itself splits it; anything else is one. Commas may arrive percent-encoded.
 */
export function callsIn(url: string): number {
  if (!url.startsWith(TRPC_PREFIX)) return 1;
  const query = url.indexOf('?');
  if (query < 0 || new URLSearchParams(url.slice(query + 1)).get('batch') !== '1') return 1;
  return url.slice(TRPC_PREFIX.length, query).split(/,|%2C/i).length;
}

/**
 * Callers the memory store remembers, the least recently counted forgotten beyond: a flood of
 * distinct addresses cannot grow the process's memory (a few hundred bytes a caller), and a caller
 * who keeps sending is recently counted, so it is forgotten (and starts a fresh window) only after
 * this many other callers came between two of its requests.
 */
export const MEMORY_STORE_CALLERS = 10_000;

/**
 * Counters in Redis when `options.redisUrl` is set, else in the plugin's memory store.
 * `maxBatch`: the calls a /trpc batch may carry (more is refused with 400 anyway), so a crafted
 * URL cannot queue more counts than that.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions, maxBatch: number): Promise<RateLimiter> {
  // Logged once per outage, not once per request; health reports it meanwhile.
  let storeDown = false;
  const storeFailed = (error: unknown): void => {
    if (storeDown) return;
    storeDown = true;
    app.log.warn({ err: error }, 'rate-limit store unavailable: requests are not counted until it answers again');
  };
  const storeAnswered = (): void => {
    if (!storeDown) return;
    storeDown = false;
    app.log.info('rate-limit store available again: requests are counted');
  };

  const redis = options.redisUrl === undefined ? undefined : await createRedis(options.redisUrl);
  if (redis) {
    // ioredis reports each failed (re)connection here; unheard, it would print them to stderr.
    redis.on('error', storeFailed);
    // Awaited so that the first requests count; a dead Redis fails fast (refused or connectTimeout)
    // and the client keeps reconnecting in the background.
    await redis.connect().catch(storeFailed);
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }

  await app.register(rateLimitPlugin, {
    // No per-route hooks: `count` is called for every request, routed or not (see above).
    global: false,
    max: options.max,
    timeWindow: options.timeWindow,
    // An address by its key: an IPv6 client by its /64 (server/lib/client-address.ts).
    keyGenerator: (request) => (request.caller ? `sub:${request.caller.sub}` : `ip:${addressKey(request.ip)}`),
    // Fail open: a store error (Redis down or slow) lets the request through uncounted.
    skipOnError: true,
    ...(redis ? { store: redisLeaseStore(redis, 'order-service:rate-limit:') } : { cache: MEMORY_STORE_CALLERS }),
  });
  const limit = app.createRateLimit();

  // Requests already counted, so that the onSend net below never counts one twice.
  const counted = new WeakSet<FastifyRequest>();

  async function countRequest(request: FastifyRequest, reply: FastifyReply, enforce: boolean): Promise<void> {
    if (counted.has(request)) return;
    counted.add(request);
    // A batch of N calls adds N, one store increment per call: the store API adds one at a time, and
    // increments from other requests or instances may interleave without losing any (in memory, or
    // from disjoint ranges of one count in Redis). The batch is refused whole when its last call
    // does not fit in what remains: its calls still count, as a refused request does. Past `max + 1` further increments change nothing (the caller is refused until
    // the window resets), so a huge batch costs at most `max + 1` store operations; and a batch past
    // `maxBatch` calls is refused whole, so at most `maxBatch + 1` are counted.
    const weight = Math.min(callsIn(request.url), options.max + 1, maxBatch + 1);
    // One call (every REST request) without the batch's array of increments.
    const outcomes = weight === 1 ? [await limit(request)] : await Promise.all(Array.from({ length: weight }, () => limit(request)));
    const results = outcomes.filter((r): r is Counted => !r.isAllowed);
    const first = results[0];
    if (!first) return;
    // With skipOnError the plugin answers a store error as a count of zero, which no counted
    // request leaves (each adds one): `remaining === max` means the store did not answer.
    if (results.some((r) => r.max > 0 && r.remaining === r.max)) {
      storeFailed(new Error('the rate-limit store (Redis) did not answer: an error or a timeout'));
      // Still the contract's headers: the limit, nothing counted, a full window.
      reply.header('ratelimit-limit', first.max).header('ratelimit-remaining', first.max).header('ratelimit-reset', Math.ceil(first.timeWindow / 1000));
      return;
    }
    storeAnswered();
    // The batch's last call is the one counted highest: past the limit if any is, else the one that
    // leaves least (the counts of a batch's calls come back in no particular order).
    const last = results.reduce((a, b) => (a.isExceeded !== b.isExceeded ? (a.isExceeded ? a : b) : a.remaining <= b.remaining ? a : b));
    const reset = Math.max(1, last.ttlInSeconds);
    reply.header('ratelimit-limit', last.max).header('ratelimit-remaining', last.remaining).header('ratelimit-reset', reset);
    if (last.isExceeded && enforce) {
      throw new DomainError('rate-limited', `Too many requests: the limit is ${last.max} per ${Math.ceil(last.timeWindow / 1000)} s; retry in ${reset} s.`, {
        headers: { 'retry-after': String(reset) },
      });
    }
  }

  // The net: an answer refused in onRequest before `count` ran (the 503 while shutting down) is
  // counted on its way out and carries the headers too; it is a refusal already, so never a 429.
  // Callback style: the answers already counted (nearly all) pass on without a promise each.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (counted.has(request)) {
      done(null, payload);
      return;
    }
    countRequest(request, reply, false).then(
      () => done(null, payload),
      (error: unknown) => done(error as Error),
    );
  });

  return {
    count: (request, reply) => countRequest(request, reply, true),
    async storeState() {
      if (!redis) return undefined;
      try {
        await redis.ping();
        return 'ok';
      } catch {
        return 'unavailable';
      }
    },
  };
}

/**
 * A client that never makes a request wait on a dead Redis: short connect and command timeouts,
 * no offline queue (a command while disconnected fails at once, and the limiter fails open), and
 * reconnection in the background.
 */
async function createRedis(url: string): Promise<Redis> {
  // Loaded only when counters live in Redis: the client is some 10 MB of a process's memory.
  const { Redis } = await import('ioredis');
  return new Redis(url, {
    lazyConnect: true,
    connectTimeout: 500,
    commandTimeout: 200,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2000),
  });
}

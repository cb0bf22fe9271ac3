/**
 * Throughput of a REST read through the facade versus a raw Fastify route running the same SQL,
 * measured in one session and printed as a ratio (machines here are shared and noisy; only the
 * ratio means something). Goal: REST >= 0.85x raw.
 *
 *   npx tsx scripts/bench-rest.ts            # embedded PGlite in memory
 *   DATABASE_URL=postgres://... npx tsx scripts/bench-rest.ts
 *   BENCH_SECONDS=5 BENCH_ROUNDS=3 ...
 */
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { TokenService } from '../server/auth/tokens.ts';
import { buildApp } from '../server/app.ts';
import { openDatabase } from '../server/db/client.ts';
import { createProduct, getProduct } from '../server/modules/products/products.service.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

const database = await openDatabase({ url: process.env.DATABASE_URL ?? 'memory://', dataDir: '' });
const product = await createProduct({
  db: database.db,
  input: { sku: `BENCH-${Date.now()}`, name: 'Benchmark mug', category: 'kitchen', price: 1200, currency: 'USD', stock: 5 },
});

const tokens = new TokenService({ secret: 'x'.repeat(32), issuer: 'order-service', audience: 'order-service-api', accessTokenTtlSeconds: 900 });
// Rate limiting stays on the measured path, with a limit the run cannot reach.
const app = await buildApp({ database, tokens, rateLimit: { max: 1e9, timeWindow: '1 minute' } });
await app.listen({ port: 0, host: '127.0.0.1' });

// The baseline: a bare Fastify route running the same query and mapping (the service function),
// so the ratio is the cost of the facade (routing, auth, tRPC, validation, ETag, headers).
const raw = Fastify();
raw.get<{ Params: { id: string } }>('/raw/products/:id', async (request, reply) => {
  const product = await getProduct({ db: database.db, id: Number(request.params.id) });
  return reply.header('cache-control', 'public, max-age=60').send(product);
});
await raw.listen({ port: 0, host: '127.0.0.1' });

const portOf = (server: typeof raw.server) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};

async function measure(url: string): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

const restUrl = `http://127.0.0.1:${portOf(app.server)}/api/v1/products/${product.id}`;
const rawUrl = `http://127.0.0.1:${portOf(raw.server)}/raw/products/${product.id}`;
await measure(rawUrl); // warm-up of both paths (JIT, caches)
await measure(restUrl);

const ratios: number[] = [];
console.log(`database: ${database.kind}, ${connections} connections, ${seconds}s x ${rounds} rounds (interleaved)`);
for (let round = 1; round <= rounds; round++) {
  const rawRps = await measure(rawUrl);
  const restRps = await measure(restUrl);
  ratios.push(restRps / rawRps);
  console.log(`round ${round}: raw ${rawRps.toFixed(0)} req/s, REST ${restRps.toFixed(0)} req/s, ratio ${(restRps / rawRps).toFixed(3)}`);
}
ratios.sort((a, b) => a - b);
const median = ratios[Math.floor(ratios.length / 2)] ?? 0;
console.log(`median ratio REST/raw: ${median.toFixed(3)} (goal >= 0.85)`);

await raw.close();
await app.close();

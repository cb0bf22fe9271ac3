/**
 * The benchmark's load generator: one autocannon run in a process of its own, so it never shares
 * an event loop (or a JIT, or a heap) with the server it measures. scripts/bench/run.ts starts it
 * once per round with a JSON spec on its stdin (a payment pool is too long for an argument) and
 * reads one JSON line from its stdout.
 *
 * Why autocannon's API and not its CLI: the payment case needs a body with a different order id
 * and Idempotency-Key per request (each payment needs a confirmed order of its own); the CLI's
 * `[<id>]` replacement only inserts random ids. `setupRequest` draws the next order from a pool.
 */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** Payment case: one request per order id, `amount` the orders' (equal) total. */
  payments?: { orderIds: number[]; amount: number; keyPrefix: string };
}

export interface LoadResult {
  /** Successful (2xx) requests per second over the run's real duration. */
  rps: number;
  p50: number;
  p99: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** Payment case: pool entries handed out (some may be built but never sent at the end). */
  consumed: number;
  exhausted: boolean;
  /** This process's own CPU time over its whole life (user + system), in ms. */
  cpuMs: number;
}

const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec;
if (spec.payments && spec.payments.orderIds.length === 0) {
  console.error('load.ts: the payment pool is empty');
  process.exit(2);
}

let consumed = 0;
let exhausted = false;
const pool = spec.payments;

const requests: autocannon.Request[] | undefined = pool
  ? [
      {
        method: 'POST',
        setupRequest: (request) => {
          const orderId = pool.orderIds[consumed];
          if (orderId === undefined) {
            // Out of orders: stop, and send a repeat (its 409 shows in non2xx) rather than nothing,
            // which autocannon cannot do. run.ts sizes the pool so this stays theoretical.
            exhausted = true;
            instance.stop();
          } else {
            consumed++;
          }
          const id = orderId ?? pool.orderIds[pool.orderIds.length - 1] ?? 0;
          return {
            ...request,
            headers: { ...spec.headers, 'idempotency-key': `${pool.keyPrefix}-${id}` },
            body: JSON.stringify({ order_id: id, amount: pool.amount, method: 'card' }),
          };
        },
      },
    ]
  : undefined;

const instance = autocannon(
  {
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    ...(requests ? { requests } : {}),
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
  },
  (error, result) => {
    if (error) {
      console.error(error);
      process.exit(1);
    }
    // autocannon's `duration` is the run's real length in seconds (shorter when stopped early).
    const seconds = result.duration > 0 ? result.duration : spec.seconds;
    const ok = result['2xx'];
    const out: LoadResult = {
      rps: ok / seconds,
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      ok,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      seconds,
      consumed,
      exhausted,
      cpuMs: cpuMs(),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  },
);

/**
 * How long a client may take: to send a request's headers, to send the whole request (headers and
 * body), and to stay connected idle between requests. Without bounds a client sending a declared
 * body a byte at a time holds its socket for ever, and enough of them take every socket the
 * process may open (issue 21).
 */
export interface HttpTimeouts {
  /** The headers of a request must arrive whole within this (from its first byte). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (from its first byte). */
  requestTimeoutMs: number;
  /** A keep-alive connection idle this long between requests is closed. */
  keepAliveTimeoutMs: number;
}

export const defaultHttpTimeouts: HttpTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
};

/**
 * The Fastify options that set them. Node checks the headers and request timeouts only every
 * `connectionsCheckingInterval` (30 s by default, so a 10 s timeout could wait 40 s): a second
 * here, or a quarter of a shorter timeout. The HTTP server options go to `http`, or with TLS to
 * `https` beside the certificate (https.createServer takes both).
 */
export function serverTimeoutOptions(timeouts: HttpTimeouts): {
  requestTimeout: number;
  keepAliveTimeout: number;
  server: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  const shortest = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  return {
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    server: {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shortest / 4))),
    },
  };
}

/**
 * The typed client of order-service: its tRPC procedures over `/trpc`, batched, with every
 * error the service answers raised as an `OrderServiceError` that carries the RFC 9457 problem.
 */
import {
  createTRPCClient,
  httpBatchLink,
  httpLink,
  httpSubscriptionLink,
  splitLink,
  TRPCClientError,
  type Operation,
  type TRPCClient,
  type TRPCLink,
} from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { AppRouter, ErrorShape, ProblemSlug } from './app-router.js';
import type { Fetch } from './fetch.js';
import type { components } from './rest-types.js';

export type { AppRouter, Fetch, ProblemSlug };

/** An RFC 9457 problem, as the service answers every error (`type` is `/problems/<slug>`). */
export type Problem = ErrorShape['data']['problem'];
/** One entry of `problem.errors` (400 and 422): the field, dotted (`items.0.quantity`), and what is wrong. */
export type FieldError = NonNullable<Problem['errors']>[number];

/** `invalid-state-transition` -> `InvalidStateTransition`. */
type Pascal<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Capitalize<Head>}${Pascal<Tail>}` : Capitalize<S>;
type ProblemSchemas = components['schemas'];
type MembersOf<S extends string> = `${Pascal<S>}Problem` extends keyof ProblemSchemas ? ProblemSchemas[`${Pascal<S>}Problem`] : unknown;

/**
 * The problem of one slug, with the members it carries beside the RFC 9457 ones, as the OpenAPI
 * document describes them: `ProblemOf<'invalid-state-transition'>` has `allowed`,
 * `current_status` and `requested_status`; `ProblemOf<'validation-error'>` has `errors`.
 */
export type ProblemOf<S extends ProblemSlug> = Problem & { type: `/problems/${S}` } & MembersOf<S>;

/** Inputs of every procedure: `RouterInputs['products']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Outputs of every procedure: `RouterOutputs['orders']['get']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export type OrderServiceClient = TRPCClient<AppRouter>;

type Token = string | null | undefined;

interface BaseOptions {
  /** Base URL of the service, such as `https://orders.example.com`; calls go to `<url>/trpc`. */
  url: string | URL;
  /** A `fetch` to use instead of the global one (tests, older runtimes, instrumentation). */
  fetch?: Fetch;
  /**
   * Asked before every request (batch): a W3C `traceparent` to send, so the service logs the
   * caller's trace id beside its request id; nothing: none is sent (the service starts a trace).
   * With OpenTelemetry: `() => { const carrier: Record<string, string> = {};
   * propagation.inject(context.active(), carrier); return carrier.traceparent; }`.
   * A call's own `traceparent` (its `context`) wins over it.
   */
  traceparent?: () => string | undefined;
  /**
   * For subscriptions (`client.orders.onChange.subscribe(...)`, server-sent events): an
   * `EventSource` class that takes a `fetch` option, such as the `EventSource` export of the
   * `eventsource` package (v3, for browsers and Node alike). The client sends
   * the token through it in the `Authorization` header, as on every other call (a browser's own
   * EventSource cannot send headers, and a token in the URL would end up in logs). Without it,
   * a subscription fails with an error saying so.
   */
  EventSource?: EventSourceClass;
}

/** The `init` an EventSource passes to its `fetch`, as far as the client reads it: it adds its headers. */
export interface EventSourceFetchInit {
  headers: Record<string, string>;
}

/** The `fetch` an EventSource class takes as its `fetch` option (the `eventsource` package's `FetchLike`). */
export type EventSourceFetch = (url: string | URL, init: EventSourceFetchInit) => Promise<Response>;

/** An EventSource class whose init takes a `fetch` (the `eventsource` package, v3). */
export type EventSourceClass = new (
  url: string,
  init?: { fetch?: EventSourceFetch; withCredentials?: boolean },
) => {
  readonly CLOSED: number;
  readonly CONNECTING: number;
  readonly OPEN: number;
  readyState: number;
  addEventListener(type: string, listener: (event: MessageEvent) => void): void;
  removeEventListener(type: string, listener: (event: MessageEvent) => void): void;
  close(): void;
};

export type OrderServiceClientOptions = BaseOptions &
  (
    | {
        /** A fixed access token, sent as `Authorization: Bearer <token>`; omit it to call public procedures. */
        token?: string;
        getToken?: never;
      }
    | {
        /** Asked before every request (batch), so a refreshed token is used at once; nothing: anonymous. */
        getToken: () => Token | Promise<Token>;
        token?: never;
      }
  );

/** Any error the service answered: the tRPC error, plus the problem details it carried. */
export class OrderServiceError<P extends Problem = Problem> extends TRPCClientError<AppRouter> {
  readonly problem: P;

  constructor(error: TRPCClientError<AppRouter>, problem: P) {
    super(error.message, { result: error.shape ? { error: error.shape } : null, cause: error.cause, meta: error.meta });
    // TRPCClientError resets the prototype to its own; a subclass must set it back.
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = 'OrderServiceError';
    this.problem = problem;
  }

  /** The HTTP status the problem stands for (422, 404, 409...). */
  get status(): number {
    return this.problem.status;
  }
}

/**
 * Whether `error` is a problem the service answered, and, given a slug, whether it is that one,
 * narrowed to that problem's members: `if (isProblem(error, 'invalid-state-transition'))
 * error.problem.allowed` is the list of statuses the order may move to.
 */
export function isProblem(error: unknown): error is OrderServiceError;
export function isProblem<S extends ProblemSlug>(error: unknown, slug: S): error is OrderServiceError<ProblemOf<S>>;
export function isProblem(error: unknown, slug?: ProblemSlug): boolean {
  return error instanceof OrderServiceError && (slug === undefined || error.problem.type === `/problems/${slug}`);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The problem an error carries: in the tRPC error data, or as the body of an HTTP-level refusal. */
function problemOf(error: TRPCClientError<AppRouter>): Problem | undefined {
  const candidate: unknown = error.data?.problem ?? error.meta?.responseJSON;
  if (!isRecord(candidate) || typeof candidate.type !== 'string' || typeof candidate.status !== 'number') return undefined;
  return candidate as Problem;
}

/** Turns the errors that carry a problem into `OrderServiceError`s; others (network) pass as they are. */
const problemLink: TRPCLink<AppRouter> =
  () =>
  ({ op, next }) =>
    observable((observer) => {
      const subscription = next(op).subscribe({
        next: (value) => observer.next(value),
        error: (error) => {
          const problem = problemOf(error);
          observer.error(problem ? new OrderServiceError(error, problem) : error);
        },
        complete: () => observer.complete(),
      });
      return () => subscription.unsubscribe();
    });

/**
 * Per-call options the client understands, passed as `context` of a call. A type, not an
 * interface: tRPC's call context is a record, which only a type literal is assignable to.
 */
export type CallContext = {
  /**
   * Sent as `Idempotency-Key`: retrying a creating call with the same key never creates twice; the
   * service answers the first call's result again. 1-255 visible ASCII characters, e.g. a UUID.
   */
  idempotencyKey?: string;
  /**
   * Sent as the W3C `traceparent` of this call (`00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`):
   * the call then travels alone, as one request carries one. An invalid one is ignored by the service.
   */
  traceparent?: string;
  /**
   * Sent as `If-Match`: the write applies only if the resource is still the one read, else a 412
   * `precondition-failed` (its `current_etag` is the tag now) and nothing changes. Take it from
   * `entityTag(<what a read answered>)`. The call then travels alone, as the header is the request's.
   */
  ifMatch?: string;
};

/**
 * The options of a call that must run at most once however often it is retried:
 * `await client.payments.create.mutate(input, idempotent(key))`. Keep the key for the retries of
 * one operation (a timeout, a lost connection) and make a new one for the next operation.
 */
export function idempotent(idempotencyKey: string): { context: CallContext } {
  return { context: { idempotencyKey } };
}

/**
 * The options of a write that must not overwrite a change made since `representation` was read
 * (by another tab, another person): `await client.orders.patch.mutate(input, unchangedSince(await entityTag(order)))`.
 */
export function unchangedSince(tag: string): { context: CallContext } {
  return { context: { ifMatch: tag } };
}

/**
 * The `ETag` the service gives `representation` (a resource as a read answered it, e.g. an
 * `orders.get` result): the SHA-1 of its JSON, base64url, quoted, as a REST read sends it
 * (docs/api.md#caching). tRPC answers carry no headers, so the tag is computed from the body,
 * which is the same JSON. Web Crypto: a browser gives it to secure contexts only (https, localhost).
 */
export async function entityTag(representation: unknown): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) throw new Error('entityTag needs Web Crypto (crypto.subtle), which a browser gives to https and localhost pages only.');
  const digest = new Uint8Array(await subtle.digest('SHA-1', new TextEncoder().encode(JSON.stringify(representation))));
  const base64 = btoa(String.fromCharCode(...digest));
  return `"${base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}"`;
}

const ifMatchOf = (op: Operation): string | undefined => {
  const tag = op.context.ifMatch;
  return typeof tag === 'string' ? tag : undefined;
};

const idempotencyKeyOf = (op: Operation): string | undefined => {
  const key = op.context.idempotencyKey;
  return typeof key === 'string' ? key : undefined;
};

const traceparentOf = (op: Operation): string | undefined => {
  const traceparent = op.context.traceparent;
  return typeof traceparent === 'string' ? traceparent : undefined;
};

/**
 * A typed client of the service's procedures: `await client.products.create.mutate({...})`,
 * `await client.products.list.query({ category })`. Calls made together go in one request.
 */
export function createOrderServiceClient(options: OrderServiceClientOptions): OrderServiceClient {
  const { token, getToken, traceparent } = options;
  const url = `${String(options.url).replace(/\/+$/, '')}/trpc`;
  const own = options.fetch;
  // tRPC's fetch type differs from the platform's in `signal` (undefined, not null): adapted here,
  // so a caller's `typeof fetch` needs no cast.
  const fetchOption = own ? { fetch: (input: Parameters<typeof fetch>[0], init?: RequestInit | { signal?: AbortSignal | undefined }) => own(input instanceof Request ? input.url : String(input), init === undefined ? undefined : ({ ...init, signal: init.signal ?? null } as RequestInit)) } : {};
  const authorization = async (): Promise<Record<string, string>> => {
    const current = getToken ? await getToken() : token;
    return current ? { authorization: `Bearer ${current}` } : {};
  };
  /** The call's own traceparent, else the client's, else none. */
  const trace = (own?: string): Record<string, string> => {
    const value = own ?? traceparent?.();
    return value ? { traceparent: value } : {};
  };
  // Subscriptions over server-sent events: the EventSource fetches through the client's fetch,
  // with the token asked for at each (re)connection, so a refreshed one is used.
  const EventSourceOption = options.EventSource;
  const subscriptions: TRPCLink<AppRouter> = EventSourceOption
    ? httpSubscriptionLink({
        url,
        EventSource: EventSourceOption,
        eventSourceOptions: {
          fetch: async (input, init) => {
            const headers = { ...init.headers, ...(await authorization()), ...trace() };
            return own ? own(String(input), { ...init, headers }) : fetch(input, { ...init, headers });
          },
        },
      })
    : () => () =>
        observable((observer) => {
          observer.error(new TRPCClientError('Subscriptions need an EventSource class: pass createOrderServiceClient({ EventSource }) (the `eventsource` package).'));
        });
  return createTRPCClient<AppRouter>({
    links: [
      problemLink,
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: subscriptions,
        false: splitLink({
          // The key (and a call's own traceparent or If-Match) is a header of the whole HTTP request:
          // a call with one travels alone, so a batch never carries one key for several calls.
          condition: (op) => idempotencyKeyOf(op) !== undefined || traceparentOf(op) !== undefined || ifMatchOf(op) !== undefined,
          true: httpLink({
            url,
            ...fetchOption,
            headers: async ({ op }) => {
              const key = idempotencyKeyOf(op);
              const tag = ifMatchOf(op);
              return {
                ...(await authorization()),
                ...(key === undefined ? {} : { 'idempotency-key': key }),
                ...(tag === undefined ? {} : { 'if-match': tag }),
                ...trace(traceparentOf(op)),
              };
            },
          }),
          false: httpBatchLink({
            url,
            ...fetchOption,
            // Browsers and proxies refuse long URLs; longer batches of queries are split. The
            // service takes up to 100 calls a request; 50 keeps each response small.
            maxURLLength: 2083,
            maxItems: 50,
            headers: async () => ({ ...(await authorization()), ...trace() }),
          }),
        }),
      }),
    ],
  });
}

export { refreshingToken, TokenRefreshError, type RefreshingTokenOptions, type TokenResponse } from './tokens.js';
export { clientCredentials, type ClientCredentialsOptions } from './client-credentials.js';
export {
  CUSTOMER_SCOPES,
  finishSignIn,
  SignInError,
  signInWithPassword,
  startSignIn,
  type BrowserSignInOptions,
  type SignInOptions,
} from './sign-in.js';
export { memoryTokenStore, sessionStorageTokenStore, type KeyValueStorage, type TokenStore } from './token-store.js';

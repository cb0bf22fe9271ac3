/**
 * Errors as sentences a shopper understands. Every error the service answers is a problem (RFC 9457)
 * whose `type` names what went wrong; the page shows a sentence for it, never the JSON. The
 * problem's `request_id` is shown as a reference the shop's support can look up.
 */
import { isProblem, SignInError, TokenRefreshError, type ProblemSlug } from '@order-service/client';
import { serviceUrl } from './session.ts';

/** What a field of the service's inputs is, in the shopper's words. */
const FIELDS: Record<string, string> = {
  address: 'the delivery address',
  items: 'the items in your cart',
  quantity: 'a quantity',
  amount: 'the amount to pay',
  method: 'the payment method',
};

const fieldName = (field: string): string => FIELDS[field.split('.').find((part) => FIELDS[part] !== undefined) ?? ''] ?? 'your details';

/** One sentence per problem type a shopper may meet; the rest fall back on the HTTP status. */
const SENTENCES: Partial<Record<ProblemSlug, string>> = {
  'not-found': "We couldn't find that. It may have been removed, or the link is wrong.",
  unauthorized: 'Please sign in to continue.',
  forbidden: "Your account isn't allowed to do that.",
  'insufficient-scope': "Your account isn't allowed to do that.",
  'insufficient-stock': "Sorry, we don't have enough of an item in stock. Lower its quantity or remove it, then try again.",
  'order-has-payment': 'This order has already been paid.',
  conflict: 'This changed in the meantime. Reload the page and try again.',
  // Only the order page's stock fix sends If-Match, and it reads the order again on a 412.
  'precondition-failed': 'This order changed in the meantime, so nothing was changed: it has been reloaded. Check it and try again.',
  'idempotency-key-in-use': 'Your payment is still being processed. Wait a moment, then reload the page.',
  'idempotency-key-mismatch': 'This payment was already started with other details. Reload the page to see where it stands.',
  'rate-limited': 'Too many tries just now. Wait a minute and try again.',
  'request-timeout': 'That took too long. Please try again.',
  'service-unavailable': 'The shop is having trouble right now. Please try again in a moment.',
  'internal-error': 'Something went wrong on our side. Please try again in a moment.',
};

/** An order's status in the shopper's words (`invalid-state-transition` names the current one). */
export const STATUS_LABELS = {
  draft: 'Not placed yet',
  confirmed: 'Awaiting payment',
  paid: 'Paid',
  shipped: 'Shipped',
  delivered: 'Delivered',
  completed: 'Completed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
} as const;

export type OrderStatus = keyof typeof STATUS_LABELS;

export interface Explained {
  message: string;
  /** The problem's request id, for support. */
  reference?: string;
  /** Whether signing in again is the way on. */
  signIn?: boolean;
}

/**
 * What the service said about one field of a refused input (a 422's `errors[].message`), as a
 * sentence to show beside that field: the shopper sees why, not only which field.
 */
export function fieldMessages(error: unknown, field: string): string[] {
  if (!isProblem(error, 'validation-error')) return [];
  return (error.problem.errors ?? [])
    .filter((e) => e.field === field)
    .map((e) => {
      const sentence = e.message.charAt(0).toUpperCase() + e.message.slice(1);
      return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
    });
}

/**
 * Whether no answer came at all: `fetch` rejects with a TypeError when the service is down, the
 * address is wrong or the browser withheld the answer (CORS), and the client keeps it as a cause.
 */
function noAnswer(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof TypeError) return true;
  return false;
}

/**
 * The page's words when the service cannot be reached: where the app looked, and the two usual
 * reasons (the service is not running; its CORS_ORIGINS does not allow this page's origin).
 */
const unreachable = (): Explained => ({
  message: `Cannot reach the order service at ${serviceUrl}: is it running, and does its CORS_ORIGINS include this page's origin (${location.origin})?`,
});

/** Any error of a call or a sign-in, as a message for the page. */
export function explain(error: unknown, context: { productName?: (id: number) => string | undefined } = {}): Explained {
  if (error instanceof TokenRefreshError) return { message: 'Your sign-in has ended. Please sign in again.', signIn: true };
  if (error instanceof SignInError) {
    if (error.status === undefined && noAnswer(error)) return unreachable();
    if (error.error === 'access_denied') return { message: 'The sign-in was cancelled.' };
    if (error.error === 'invalid_request') return { message: 'This sign-in was already finished or has expired. Please sign in again.', signIn: true };
    return { message: "We couldn't sign you in. Please try again.", signIn: true };
  }
  if (isProblem(error)) {
    const reference = error.problem.request_id;
    const withReference = (message: string): Explained => (reference === undefined ? { message } : { message, reference });
    if (isProblem(error, 'validation-error')) {
      const fields = [...new Set((error.problem.errors ?? []).map((e) => fieldName(e.field)))];
      return withReference(fields.length > 0 ? `Please check ${fields.join(' and ')}.` : 'Please check the details you entered.');
    }
    if (isProblem(error, 'insufficient-stock')) {
      const names = error.problem.product_ids.map((id) => context.productName?.(id)).filter((name): name is string => name !== undefined);
      if (names.length > 0) return withReference(`Sorry, we don't have enough ${names.join(' or ')} in stock. Change the order below, then confirm it again.`);
    }
    if (isProblem(error, 'invalid-state-transition')) {
      const current: OrderStatus = error.problem.current_status;
      return withReference(`This order can't do that any more: it is now "${STATUS_LABELS[current]}". The page shows where it stands.`);
    }
    if (error.status === 401) return { ...withReference(SENTENCES.unauthorized ?? ''), signIn: true };
    const slug = error.problem.type.replace(/^\/problems\//, '') as ProblemSlug;
    const sentence = SENTENCES[slug];
    if (sentence !== undefined) return withReference(sentence);
    return withReference(error.status >= 500 ? 'The shop is having trouble right now. Please try again in a moment.' : "That didn't work. Please check and try again.");
  }
  // The client's README: a network failure stays a plain TRPCClientError (no problem in it).
  if (error instanceof Error && error.name === 'TRPCClientError') return unreachable();
  if (noAnswer(error)) return unreachable();
  return { message: 'Something went wrong. Please try again.' };
}

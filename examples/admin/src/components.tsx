import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { explain } from './messages.ts';
import { onLinkClick } from './router.ts';
import { signIn } from './session.ts';

export function Link({ href, children, class: className }: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a href={href} onClick={onLinkClick} class={className}>
      {children}
    </a>
  );
}

/** The page's heading, focused when the page opens so a screen reader starts there. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <h1 tabIndex={-1} ref={heading}>
      {children}
    </h1>
  );
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined) return null;
  const explained = explain(error);
  return (
    <div role="alert" class="error">
      <p>{explained.message}</p>
      {explained.fields.length > 0 && (
        <ul>
          {explained.fields.map((field) => (
            <li key={field}>{field}</li>
          ))}
        </ul>
      )}
      {explained.reference !== undefined && <p class="reference">Request id: {explained.reference}</p>}
      {explained.signIn && (
        <button type="button" onClick={() => void signIn()}>
          Sign in
        </button>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** A short success line, announced politely. */
export function Notice({ text }: { text: string }) {
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}

/** The one way the console writes a moment, on every page: "3 May 2026, 14:05". */
const TIME_FORMAT = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
export const formatTime = (iso: string): string => TIME_FORMAT.format(new Date(iso));

/** The customer as `expand=customer` gives it: null when the caller may not read that user. */
export interface CustomerSummary {
  name: string;
  email: string;
}

/**
 * A customer by name and email, not by number: the name opens their orders (`/?customer_id=`),
 * the email writes to them. Before the user is read (or when it may not be), the number.
 */
export function CustomerLink({ id, customer }: { id: number; customer: CustomerSummary | null | undefined }) {
  if (customer === null || customer === undefined) return <Link href={`/?customer_id=${id}`}>Customer #{id}</Link>;
  return (
    <>
      <Link href={`/?customer_id=${id}`}>{customer.name}</Link> <a href={`mailto:${customer.email}`}>{customer.email}</a>
    </>
  );
}

/** A random idempotency key (getRandomValues: randomUUID needs a secure context, which plain-http loopback previews are not). */
export const newKey = (): string => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

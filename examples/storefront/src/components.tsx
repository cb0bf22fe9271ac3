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

/** An error as a sentence, announced; a way to sign in when that is what is needed. */
export function ErrorMessage({ error, productName }: { error: unknown; productName?: (id: number) => string | undefined }) {
  if (error === undefined) return null;
  const explained = explain(error, productName === undefined ? {} : { productName });
  return (
    <div role="alert" class="error">
      <p>{explained.message}</p>
      {explained.reference !== undefined && <p class="reference">Reference: {explained.reference}</p>}
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

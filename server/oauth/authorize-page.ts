/**
 * The pages of `/oauth/authorize`: the sign-in form, the sign-up form and the refusal page. Plain
 * HTML that works with a keyboard and a screen reader: one `<main>`, an `<h1>`, labelled fields
 * with the autocomplete tokens password managers look for, errors in a `role="alert"` element and
 * beside the fields they concern, no script. Every value that came from a request or the database
 * is escaped.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { consentOf } from '../auth/scopes.ts';
import type { AuthorizationRequestParams } from './csrf.ts';
import { REQUEST_PARAMETERS } from './csrf.ts';
import { SIGN_UP_FIELDS, type FieldErrors, type TypedValues } from './sign-up.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f4f5; color: #18181b; }
main { max-width: 24rem; margin: 3rem auto; padding: 2rem; background: #fff; border-radius: 8px; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { box-sizing: border-box; width: 100%; padding: .5rem; font: inherit; border: 1px solid #71717a; border-radius: 4px; }
input:focus, button:focus { outline: 3px solid #2563eb; outline-offset: 2px; }
button { margin-top: 1.5rem; width: 100%; padding: .6rem; font: inherit; font-weight: 600; color: #fff; background: #1d4ed8; border: 0; border-radius: 4px; }
[role="alert"] { padding: .75rem; color: #7f1d1d; background: #fee2e2; border-radius: 4px; }
.scopes, .hint { color: #52525b; font-size: .9rem; }
.scopes p { margin: 1rem 0 0; }
.scopes ul { margin: .25rem 0 0; padding-left: 1.25rem; }
.hint, .field-error { margin: .25rem 0 0; }
.field-error { color: #7f1d1d; font-size: .9rem; font-weight: 600; }
a { color: #1d4ed8; }
`;

/** The inline style is allowed by its hash: the policy allows nothing else to style or run. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * `form-action` must name the client's redirect target too: Chromium applies it to the redirect
 * that follows the form's POST. For http(s) URIs its origin, for an app's private-use scheme
 * (`com.example.app:/callback`) the scheme.
 */
function formActionTarget(redirectUri: string | undefined): string {
  if (redirectUri === undefined) return '';
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'http:' || url.protocol === 'https:') return ` ${url.origin}`;
    return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? ` ${url.protocol}` : '';
  } catch {
    return '';
  }
}

/** The headers of every page and redirect of /oauth/authorize. */
export function pageHeaders(reply: FastifyReply, redirectUri?: string): FastifyReply {
  return reply
    .header(
      'content-security-policy',
      `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'${formActionTarget(redirectUri)}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('referrer-policy', 'no-referrer');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - order-service</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The `prompt` value that asks for the sign-up form (OpenID Connect's "Initiating User Registration"). */
export const SIGN_UP_PROMPT = 'create';

/** A link to this endpoint for the same authorization request: the sign-in form, or with `prompt=create` the sign-up form. */
export function authorizeHref(params: AuthorizationRequestParams, form: 'sign-in' | 'sign-up'): string {
  const query = new URLSearchParams();
  for (const name of REQUEST_PARAMETERS) {
    const value = params[name];
    if (value !== undefined) query.set(name, value);
  }
  if (form === 'sign-up') query.set('prompt', SIGN_UP_PROMPT);
  return `authorize?${query}`;
}

function hiddenFields(params: AuthorizationRequestParams, csrfToken: string, extra: Record<string, string> = {}): string {
  const fields = REQUEST_PARAMETERS.flatMap((name) => {
    const value = params[name];
    return value === undefined ? [] : [[name, value] as const];
  });
  return [...fields, ...Object.entries(extra), ['csrf_token', csrfToken] as const]
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/**
 * What the app will be able to do once the person signs in: one plain phrase per scope granted,
 * from each scope's declaration (`consent`, server/auth/scopes.ts), never the scope names, which
 * mean nothing to a shopper (docs/signing-in.md#the-sign-in-form).
 */
function grantedScopes(clientName: string, scope: string): string {
  const phrases = consentOf(scope);
  if (phrases.length === 0) return '';
  return `<div class="scopes">
<p id="scopes-heading">${escapeHtml(clientName)} will be able to:</p>
<ul aria-labelledby="scopes-heading">
${phrases.map((phrase) => `<li>${escapeHtml(phrase)}</li>`).join('\n')}
</ul>
</div>`;
}

export interface SignInForm {
  clientName: string;
  scope: string;
  params: AuthorizationRequestParams;
  csrfToken: string;
  /** Whether to offer "Create an account" (`SIGN_UP_ENABLED`). */
  signUp: boolean;
  email?: string;
  error?: string;
}

export function signInPage(form: SignInForm): string {
  const alert = form.error === undefined ? '' : `<p role="alert" id="sign-in-error">${escapeHtml(form.error)}</p>\n`;
  const described = form.error === undefined ? '' : ' aria-describedby="sign-in-error"';
  const emailValue = form.email === undefined ? '' : ` value="${escapeHtml(form.email)}"`;
  // Focus where the user types next: the email, or the password when the email is known.
  const focusEmail = form.email === undefined ? ' autofocus' : '';
  const focusPassword = form.email === undefined ? '' : ' autofocus';
  return page(
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(form.clientName)}</strong></p>
${alert}<form method="post" action="authorize">
${hiddenFields(form.params, form.csrfToken)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254"${emailValue}${described}${focusEmail}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256"${described}${focusPassword}>
<button type="submit">Sign in</button>
</form>
${form.signUp ? `<p>New here? <a href="${escapeHtml(authorizeHref(form.params, 'sign-up'))}">Create an account</a></p>\n` : ''}${grantedScopes(form.clientName, form.scope)}`,
  );
}

export interface SignUpForm {
  clientName: string;
  scope: string;
  params: AuthorizationRequestParams;
  csrfToken: string;
  /** What was typed, shown again (never the password). */
  values?: TypedValues;
  /** What is wrong with the form as a whole, in the alert. */
  error?: string;
  /** What is wrong with each field, beside it. */
  fieldErrors?: FieldErrors;
  /** The email has an account: the alert links to the sign-in form. */
  signInInstead?: boolean;
}

const FIELD_INPUTS: Record<(typeof SIGN_UP_FIELDS)[number], { label: string; attributes: string }> = {
  name: { label: 'Name', attributes: 'type="text" autocomplete="name" required maxlength="200"' },
  email: { label: 'Email', attributes: 'type="email" autocomplete="email" required maxlength="254"' },
  password: { label: 'Password', attributes: 'type="password" autocomplete="new-password" required minlength="8" maxlength="256"' },
};

/**
 * The sign-up form: the same request's hidden fields and CSRF token as the sign-in form, plus
 * `prompt=create`. Each field's error sits under it, marked `aria-invalid` and named by its
 * `aria-describedby`; the first field in error (else the name) has the focus.
 */
export function signUpPage(form: SignUpForm): string {
  const fieldErrors = form.fieldErrors ?? {};
  const focus = SIGN_UP_FIELDS.find((name) => fieldErrors[name] !== undefined) ?? 'name';
  const signInLink = `<a href="${escapeHtml(authorizeHref(form.params, 'sign-in'))}">Sign in instead</a>`;
  const alert =
    form.error === undefined ? '' : `<p role="alert" id="sign-up-error">${escapeHtml(form.error)}${form.signInInstead ? ` ${signInLink}.` : ''}</p>\n`;
  const fields = SIGN_UP_FIELDS.map((name) => {
    const { label, attributes } = FIELD_INPUTS[name];
    const error = fieldErrors[name];
    const described = [...(name === 'password' ? ['password-hint'] : []), ...(error === undefined ? [] : [`${name}-error`])];
    const typed = name === 'password' ? undefined : form.values?.[name];
    return [
      `<label for="${name}">${label}</label>`,
      `<input id="${name}" name="${name}" ${attributes}${typed === undefined ? '' : ` value="${escapeHtml(typed)}"`}` +
        `${error === undefined ? '' : ' aria-invalid="true"'}${described.length > 0 ? ` aria-describedby="${described.join(' ')}"` : ''}${name === focus ? ' autofocus' : ''}>`,
      ...(name === 'password' ? ['<p class="hint" id="password-hint">At least 8 characters.</p>'] : []),
      ...(error === undefined ? [] : [`<p class="field-error" id="${name}-error">${escapeHtml(error)}</p>`]),
    ].join('\n');
  });
  return page(
    'Create an account',
    `<h1>Create an account</h1>
<p>to continue to <strong>${escapeHtml(form.clientName)}</strong></p>
${alert}<form method="post" action="authorize">
${hiddenFields(form.params, form.csrfToken, { prompt: SIGN_UP_PROMPT })}
${fields.join('\n')}
<button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="${escapeHtml(authorizeHref(form.params, 'sign-in'))}">Sign in</a></p>
${grantedScopes(form.clientName, form.scope)}`,
  );
}

/** A request that cannot be answered with a redirect (unknown client, unregistered redirect URI...). */
export function refusalPage(title: string, message: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p>Go back to the application you came from and try again. If this keeps happening, its developers need to fix the sign-in request.</p>`,
  );
}

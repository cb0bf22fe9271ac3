import { z } from 'zod';
import { SCOPES, type Scope as ScopeName } from '../../auth/policy.ts';
import { GRANT_TYPES } from '../../db/schema.ts';
import { listOf, PageQuery, text, Timestamp } from '../common.schemas.ts';
import { grantComplaints, redirectUriProblem } from './clients.rules.ts';

export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Random ones are 22 characters (16 bytes, base64url); the built-in clients have readable names. */
export const ClientId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _')
  .meta({ description: 'The public client identifier, assigned by the service.', example: 'Hq3cY1n0x9K7d2mWv8Jt4A' });
export const ClientIdParam = z.strictObject({ client_id: ClientId });

export const GrantType = z
  .enum(GRANT_TYPES)
  .meta({ id: 'GrantType', description: 'An OAuth 2.0 grant type (RFC 6749) the client may use at the token endpoint.' });

/**
 * Built on first use, not as this file loads: the modules declare their scopes as they load
 * (auth/scopes.ts), and this one may load before them.
 */
let scopeEnum: z.ZodEnum<{ [S in ScopeName]: S }> | undefined;
export const Scope = z.lazy(
  () =>
    (scopeEnum ??= z
      .enum(SCOPES as readonly [ScopeName, ...ScopeName[]])
      .meta({ id: 'Scope', description: 'An OAuth scope; the oauth2 security scheme says what each one grants.' })),
);

const RedirectUri = z
  .string()
  .min(1)
  .max(MAX_REDIRECT_URI_LENGTH)
  .superRefine((uri, ctx) => {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description:
      'Absolute URI without a fragment, compared as an exact string: https, http only to localhost, 127.0.0.1 or [::1], ' +
      'or a private-use scheme of a native app (RFC 8252), such as com.example.app:/callback.',
    example: 'https://app.example.com/oauth/callback',
  });

/** Duplicates in a list the service treats as a set: a typo, refused rather than merged. */
function noRepeats<T>(values: readonly T[], ctx: z.RefinementCtx, what: string): void {
  if (new Set(values).size !== values.length) ctx.addIssue({ code: 'custom', message: `must not repeat a ${what}` });
}

// Its longest is every scope once, known only once the modules have loaded (as Scope above).
const scopeListSchema = () =>
  z
    .array(Scope)
    .min(1)
    .max(SCOPES.length)
    .superRefine((scopes, ctx) => noRepeats(scopes, ctx, 'scope'))
    .meta({ description: 'The most a token issued to this client may carry.', example: ['orders:read', 'orders:write'] });
let scopeList: ReturnType<typeof scopeListSchema> | undefined;

export const ClientInput = z
  .strictObject({
    name: text(1, 200).meta({ description: 'Shown to people signing in through this client.', example: 'Shop web app' }),
    redirect_uris: z
      .array(RedirectUri)
      .max(MAX_REDIRECT_URIS)
      .superRefine((uris, ctx) => {
        uris.forEach((uri, index) => {
          if (uris.indexOf(uri) < index) ctx.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier redirect URI' });
        });
      })
      .default([])
      .meta({
        description: `Where the authorization endpoint may send the browser back, at most ${MAX_REDIRECT_URIS}; required (and only allowed) with the authorization_code grant.`,
        example: ['https://app.example.com/oauth/callback'],
      }),
    grant_types: z
      .array(GrantType)
      .min(1)
      .max(GRANT_TYPES.length)
      .superRefine((grants, ctx) => noRepeats(grants, ctx, 'grant type'))
      .meta({
        description:
          'Grants the client may use: password only for first-party clients, client_credentials only for confidential ones, ' +
          'refresh_token only beside authorization_code or password.',
        example: ['authorization_code', 'refresh_token'],
      }),
    scopes: z.lazy(() => (scopeList ??= scopeListSchema())),
    first_party: z.boolean().default(false).meta({ description: 'One of our own apps: only these may use the password grant.' }),
    confidential: z
      .boolean()
      .default(false)
      .meta({ description: 'A client that can keep a secret (a backend): it gets a client_secret and authenticates with it.' }),
  })
  .superRefine((client, ctx) => {
    // Only on well-formed parts: a wrong type or an unknown grant is already reported where it is.
    const { grant_types: grants, redirect_uris: uris, first_party: firstParty, confidential } = client as Partial<typeof client>;
    if (!Array.isArray(grants) || !Array.isArray(uris) || typeof firstParty !== 'boolean' || typeof confidential !== 'boolean') return;
    const known = grants.filter((grant) => (GRANT_TYPES as readonly unknown[]).includes(grant));
    for (const complaint of grantComplaints({ grant_types: known, redirect_uris: uris, first_party: firstParty, confidential })) {
      ctx.addIssue({ code: 'custom', path: [complaint.field], message: complaint.message });
    }
  })
  .meta({ id: 'ClientInput' });
export type ClientInput = z.infer<typeof ClientInput>;

/** Everything but the id, which the created form follows with its secret. */
const clientFields = {
  name: z.string(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(GrantType),
  scopes: z.array(Scope),
  first_party: z.boolean(),
  confidential: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Client = z.object({ client_id: ClientId, ...clientFields }).meta({ id: 'Client' });
export type Client = z.infer<typeof Client>;

/** The 201 of a creation: the client, and a confidential client's secret, this once. */
export const CreatedClient = z
  .object({
    client_id: ClientId,
    client_secret: z.string().optional().meta({
      description:
        'A confidential client\'s secret, in the answer to its creation only: the service keeps nothing but a hash of it, ' +
        'so it is never shown again (not by GET, not in an Idempotency-Key replay). Store it now.',
      example: 'kq0Vt6oZ0bq3m7Qy2lJ3aY0pX1c9w8s7RdEoF2gH4iK',
    }),
    ...clientFields,
  })
  .meta({ id: 'CreatedClient' });
export type CreatedClient = z.infer<typeof CreatedClient>;

export const ClientListQuery = z.strictObject({ ...PageQuery }).prefault({});
export type ClientListQuery = z.infer<typeof ClientListQuery>;

export const ClientList = listOf(Client).meta({ id: 'ClientList' });

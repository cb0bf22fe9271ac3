/**
 * OAuth clients of the service's authorization server: who may ask for tokens, for which scopes.
 * A browser or mobile app is public (PKCE, a redirect URI); a backend is confidential and gets a
 * secret, shown here once: the service keeps only its hash.
 */
import type { RouterInputs, RouterOutputs } from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, formatTime, Loading, Notice, PageTitle } from '../components.tsx';
import { client } from '../session.ts';

type Client = RouterOutputs['clients']['list']['data'][number];
type Scope = Client['scopes'][number];
type ClientInput = RouterInputs['clients']['create'];

const SCOPES: Scope[] = ['orders:read', 'orders:write', 'payments:write', 'fulfillments:write', 'products:write', 'users:read', 'users:write', 'events:read', 'clients:manage'];

export function Clients() {
  const [clients, setClients] = useState<Client[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState<{ id: string; secret: string } | undefined>();

  const load = () => client.clients.list.query({ limit: 100 }).then((page) => setClients(page.data));
  useEffect(() => {
    load().catch((e: unknown) => setError(e));
  }, []);

  const remove = async (c: Client) => {
    if (!confirm(`Remove ${c.name}? Its tokens stop working.`)) return;
    try {
      await client.clients.delete.mutate({ client_id: c.client_id });
      // The list first, then the word: when it says removed, the row is gone.
      await load();
      setNotice(`Removed ${c.name}.`);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <PageTitle>OAuth clients</PageTitle>
      <ErrorMessage error={error} />
      <Notice text={notice} />
      {secret !== undefined && (
        <div class="card secret" role="status">
          <p>
            The secret of <code>{secret.id}</code>, shown this once: store it now.
          </p>
          <p>
            <code>{secret.secret}</code>
          </p>
        </div>
      )}
      {clients === undefined && error === undefined && <Loading what="clients" />}
      {clients !== undefined && (
        <table class="lines">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client id</th>
              <th scope="col">Kind</th>
              <th scope="col">Scopes</th>
              <th scope="col">Registered</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {clients.map((c) => (
              <tr key={c.client_id}>
                <th scope="row">{c.name}</th>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>
                  {c.confidential ? 'confidential' : 'public'}
                  {c.first_party ? ', first party' : ''}
                </td>
                <td>{c.scopes.join(' ')}</td>
                <td>{formatTime(c.created_at)}</td>
                <td>
                  <button type="button" class="danger small" aria-label={`Remove ${c.name}`} onClick={() => void remove(c)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <section aria-labelledby="new-client">
        <h2 id="new-client">Register a client</h2>
        <ClientForm
          onCreate={async (input) => {
            const created = await client.clients.create.mutate(input);
            setSecret(created.client_secret === undefined ? undefined : { id: created.client_id, secret: created.client_secret });
            await load();
            setNotice(`Registered ${created.name} as ${created.client_id}.`);
          }}
        />
      </section>
    </>
  );
}

function ClientForm({ onCreate }: { onCreate: (input: ClientInput) => Promise<void> }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'app' | 'backend'>('app');
  const [redirect, setRedirect] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(['orders:read']));
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const toggle = (scope: Scope, on: boolean) => setScopes((now) => new Set([...now].filter((s) => s !== scope).concat(on ? [scope] : [])));
  return (
    <form
      class="stacked-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        setBusy(true);
        setError(undefined);
        const input: ClientInput =
          kind === 'app'
            ? { name, grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [redirect], scopes: [...scopes], confidential: false }
            : { name, grant_types: ['client_credentials'], scopes: [...scopes], confidential: true };
        onCreate(input)
          .catch((e: unknown) => setError(e))
          .finally(() => setBusy(false));
      }}
    >
      <ErrorMessage error={error} />
      <label>
        Name
        <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Kind</legend>
        <label class="checkbox">
          <input type="radio" name="kind" checked={kind === 'app'} onChange={() => setKind('app')} /> A browser or mobile app (public, PKCE)
        </label>
        <label class="checkbox">
          <input type="radio" name="kind" checked={kind === 'backend'} onChange={() => setKind('backend')} /> A backend service (confidential, client credentials)
        </label>
      </fieldset>
      {kind === 'app' && (
        <label>
          Redirect URI
          <input type="url" value={redirect} required placeholder="https://app.example.com/callback" onInput={(e) => setRedirect(e.currentTarget.value)} />
        </label>
      )}
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label class="checkbox" key={scope}>
            <input type="checkbox" checked={scopes.has(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} /> {scope}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={busy}>
        Register
      </button>
    </form>
  );
}

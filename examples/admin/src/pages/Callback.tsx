/** Where the service's sign-in page sends the shopper back: finish the sign-in, return where they were. */
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, Link, PageTitle } from '../components.tsx';
import { navigate } from '../router.ts';
import { completeSignIn } from '../session.ts';

export function Callback() {
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    completeSignIn()
      .then((back) => navigate(back, { replace: true }))
      .catch((e: unknown) => setError(e));
  }, []);
  return (
    <>
      <PageTitle>Signing you in</PageTitle>
      {error === undefined ? (
        <p role="status">One moment…</p>
      ) : (
        <>
          <ErrorMessage error={error} />
          <p>
            <Link href="/">Back to the orders</Link>
          </p>
        </>
      )}
    </>
  );
}

import { render } from 'preact';
import { useCart } from './cart.ts';
import { ErrorMessage, Link, PageTitle } from './components.tsx';
import { Callback } from './pages/Callback.tsx';
import { Cart } from './pages/Cart.tsx';
import { OrderPage } from './pages/Order.tsx';
import { Orders } from './pages/Orders.tsx';
import { Products } from './pages/Products.tsx';
import { usePath } from './router.ts';
import { signIn, signOut, useSignedIn, useSignInFailure } from './session.ts';
import './styles.css';

function Page({ path }: { path: string }) {
  if (path === '/') return <Products />;
  if (path === '/cart') return <Cart />;
  if (path === '/orders') return <Orders />;
  if (path === '/callback') return <Callback />;
  const order = /^\/orders\/([1-9]\d{0,15})$/.exec(path);
  if (order?.[1] !== undefined) return <OrderPage key={order[1]} id={Number(order[1])} />;
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is nothing here. <Link href="/">Browse the products</Link>.
      </p>
    </>
  );
}

function App() {
  const path = usePath();
  const signedIn = useSignedIn();
  const items = useCart().reduce((sum, line) => sum + line.quantity, 0);
  const signInFailure = useSignInFailure();
  return (
    <>
      <header class="site">
        <Link href="/" class="brand">
          Corner Shop
        </Link>
        <nav aria-label="Main">
          <Link href="/">Products</Link>
          <Link href="/cart">Cart ({items})</Link>
          {signedIn && <Link href="/orders">Your orders</Link>}
        </nav>
        <div class="account">
          {signedIn ? (
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          ) : (
            <>
              <button type="button" class="secondary" onClick={() => void signIn()}>
                Sign in
              </button>
              <button type="button" onClick={() => void signIn({ create: true })}>
                Create an account
              </button>
            </>
          )}
        </div>
      </header>
      <main>
        <ErrorMessage error={signInFailure} />
        <Page path={path} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

import { render } from 'preact';
import { ErrorMessage, Link, PageTitle } from './components.tsx';
import { Callback } from './pages/Callback.tsx';
import { Clients } from './pages/Clients.tsx';
import { OrderPage } from './pages/Order.tsx';
import { Orders } from './pages/Orders.tsx';
import { ProductPage, Products } from './pages/Products.tsx';
import { useLocation } from './router.ts';
import { signIn, signOut, useSignedIn, useSignInFailure } from './session.ts';
import './styles.css';

function Page({ path, search }: { path: string; search: string }) {
  if (path === '/') return <Orders search={search} />;
  if (path === '/products') return <Products />;
  if (path === '/clients') return <Clients />;
  const order = /^\/orders\/([1-9]\d{0,15})$/.exec(path);
  if (order?.[1] !== undefined) return <OrderPage key={order[1]} id={Number(order[1])} />;
  const product = /^\/products\/([1-9]\d{0,15})$/.exec(path);
  if (product?.[1] !== undefined) return <ProductPage key={product[1]} id={Number(product[1])} />;
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is nothing here. <Link href="/">See the orders</Link>.
      </p>
    </>
  );
}

function App() {
  const { path, search } = useLocation();
  const signedIn = useSignedIn();
  const signInFailure = useSignInFailure();
  return (
    <>
      <header class="site">
        <Link href="/" class="brand">
          Order admin
        </Link>
        {signedIn && (
          <nav aria-label="Main">
            <Link href="/">Orders</Link>
            <Link href="/products">Products</Link>
            <Link href="/clients">OAuth clients</Link>
          </nav>
        )}
        <div class="account">
          {signedIn ? (
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          ) : (
            <button type="button" onClick={() => void signIn()}>
              Sign in
            </button>
          )}
        </div>
      </header>
      <main>
        <ErrorMessage error={signInFailure} />
        {path === '/callback' ? (
          <Callback />
        ) : signedIn ? (
          <Page path={path} search={search} />
        ) : (
          <>
            <PageTitle>Order admin</PageTitle>
            <p>Sign in with an admin account to manage orders, products and OAuth clients.</p>
          </>
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

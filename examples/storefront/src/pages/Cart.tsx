/** The cart, and the checkout that makes it an order (a draft, confirmed and paid on its page). */
import { useRef, useState } from 'preact/hooks';
import { clearCart, removeFromCart, setQuantity, useCart } from '../cart.ts';
import { ErrorMessage, Link, PageTitle } from '../components.tsx';
import { formatMoney } from '../money.ts';
import { navigate } from '../router.ts';
import { client, signIn, useSignedIn } from '../session.ts';

export function Cart() {
  const lines = useCart();
  const signedIn = useSignedIn();
  const [address, setAddress] = useState(() => localStorage.getItem('storefront:address') ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  // A second click before the page re-renders must not place a second order.
  const placing = useRef(false);

  if (lines.length === 0) {
    return (
      <>
        <PageTitle>Your cart</PageTitle>
        <p>
          Your cart is empty. <Link href="/">Browse the products</Link>.
        </p>
      </>
    );
  }

  const currency = lines[0]?.currency ?? 'USD';
  const total = lines.reduce((sum, line) => sum + line.price * line.quantity, 0);

  const placeOrder = async (event: Event) => {
    event.preventDefault();
    if (placing.current) return;
    placing.current = true;
    setBusy(true);
    setError(undefined);
    try {
      localStorage.setItem('storefront:address', address);
      const order = await client.orders.create.mutate({
        items: lines.map((line) => ({ product_id: line.product_id, quantity: line.quantity })),
        address,
      });
      clearCart();
      navigate(`/orders/${order.id}`);
    } catch (e) {
      setError(e);
    } finally {
      placing.current = false;
      setBusy(false);
    }
  };

  return (
    <>
      <PageTitle>Your cart</PageTitle>
      <table class="lines">
        <caption class="visually-hidden">Items in your cart</caption>
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">Price</th>
            <th scope="col">Quantity</th>
            <th scope="col">
              <span class="visually-hidden">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {lines.map((line) => (
            <tr key={line.product_id}>
              <th scope="row">{line.name}</th>
              <td>{formatMoney(line.price, line.currency)}</td>
              <td>
                <input
                  type="number"
                  min={1}
                  max={1000}
                  value={line.quantity}
                  aria-label={`Quantity of ${line.name}`}
                  onInput={(e) => {
                    const quantity = Number(e.currentTarget.value);
                    if (Number.isInteger(quantity) && quantity >= 1) setQuantity(line.product_id, quantity);
                  }}
                />
              </td>
              <td>
                <button type="button" class="secondary" aria-label={`Remove ${line.name}`} onClick={() => removeFromCart(line.product_id)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="total">
        Total: <strong>{formatMoney(total, currency)}</strong>
      </p>
      {signedIn ? (
        <form class="checkout" onSubmit={(e) => void placeOrder(e)}>
          <label for="address">Delivery address</label>
          <textarea id="address" required rows={3} autocomplete="street-address" value={address} onInput={(e) => setAddress(e.currentTarget.value)} />
          <ErrorMessage error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Placing your order…' : 'Place order'}
          </button>
        </form>
      ) : (
        <div class="checkout">
          <p>Sign in or create an account to place your order; your cart waits for you.</p>
          <button type="button" onClick={() => void signIn()}>
            Sign in
          </button>{' '}
          <button type="button" class="secondary" onClick={() => void signIn({ create: true })}>
            Create an account
          </button>
        </div>
      )}
    </>
  );
}

/** The cart, and the checkout that makes it an order (a draft, confirmed and paid on its page). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { clearCart, readCart, removeFromCart, setQuantity, updateStock, useCart } from '../cart.ts';
import { ErrorMessage, Link, PageTitle } from '../components.tsx';
import { fieldMessages } from '../messages.ts';
import { formatMoney } from '../money.ts';
import { navigate } from '../router.ts';
import { client, signIn, useSignedIn } from '../session.ts';

export function Cart() {
  const lines = useCart();
  const signedIn = useSignedIn();
  const [address, setAddress] = useState(() => localStorage.getItem('storefront:address') ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  // Why a quantity is lower than asked: the shop has no more (announced, beside the cart).
  const [capNotice, setCapNotice] = useState('');
  // A second click before the page re-renders must not place a second order.
  const placing = useRef(false);

  // The stock as it is now (the cart's is from when each product was added): a line beyond it is
  // lowered here, where the quantity can be changed, rather than refused when the order is confirmed.
  useEffect(() => {
    const ids = readCart().map((line) => line.product_id);
    if (ids.length === 0) return;
    let current = true;
    // Calls made together travel in one request (the client batches them).
    void Promise.all(ids.map((id) => client.products.get.query({ id }).catch(() => undefined))).then((products) => {
      if (!current) return;
      const lowered = updateStock(new Map(products.flatMap((p) => (p ? [[p.id, p.stock] as const] : []))));
      if (lowered.length > 0) setCapNotice(lowered.map((line) => `Only ${line.quantity} ${line.name} in stock: your cart now holds ${line.quantity}.`).join(' '));
    });
    return () => {
      current = false;
    };
  }, []);

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

  // The service's own words about the address (a 422 names the field and says what is wrong).
  const addressErrors = fieldMessages(error, 'address');
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
                  max={line.stock ?? 10_000}
                  value={line.quantity}
                  aria-label={`Quantity of ${line.name}`}
                  {...(line.stock === undefined ? {} : { 'aria-describedby': `stock-${line.product_id}` })}
                  onInput={(e) => {
                    const quantity = Number(e.currentTarget.value);
                    if (!Number.isInteger(quantity) || quantity < 1) return;
                    const held = setQuantity(line.product_id, quantity);
                    setCapNotice(held < quantity ? `Only ${held} ${line.name} in stock: your cart now holds ${held}.` : '');
                  }}
                />{' '}
                {line.stock !== undefined && (
                  <span class="stock" id={`stock-${line.product_id}`}>
                    {line.stock > 0 ? `${line.stock} in stock` : 'Out of stock: remove it to order the rest'}
                  </span>
                )}
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
      <p class="notice" role="status">
        {capNotice}
      </p>
      <p class="total">
        Total: <strong>{formatMoney(total, currency)}</strong>
      </p>
      {signedIn ? (
        <form class="checkout" onSubmit={(e) => void placeOrder(e)}>
          <label for="address">Delivery address</label>
          <textarea
            id="address"
            required
            rows={3}
            maxLength={500}
            autocomplete="street-address"
            value={address}
            onInput={(e) => setAddress(e.currentTarget.value)}
            {...(addressErrors.length > 0 ? { 'aria-invalid': true, 'aria-describedby': 'address-error' } : {})}
          />
          {addressErrors.length > 0 && (
            <p id="address-error" class="field-error">
              {addressErrors.join(' ')}
            </p>
          )}
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

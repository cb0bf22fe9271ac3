/**
 * One order: its items and status, the next step its `_links` offer (confirm, pay, cancel), and its
 * payments. The status is live: the order's events arrive over server-sent events
 * (`orders.onChange`), and the page reads the order again on each.
 */
import { entityTag, idempotent, isProblem, unchangedSince, type RouterOutputs } from '@order-service/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorMessage, Link, Loading, PageTitle } from '../components.tsx';
import { formatTime } from '../dates.ts';
import { STATUS_LABELS, type OrderStatus } from '../messages.ts';
import { formatMoney } from '../money.ts';
import { client } from '../session.ts';

type Order = RouterOutputs['orders']['get'];
type Payment = RouterOutputs['payments']['list']['data'][number];
type Fulfillment = RouterOutputs['fulfillments']['list']['data'][number];
type Method = RouterOutputs['payments']['get']['method'];

const DONE: readonly OrderStatus[] = ['completed', 'cancelled', 'refunded'];

const NEXT_STEP: Record<OrderStatus, string> = {
  draft: 'Check the items and the address, then confirm the order to reserve them.',
  confirmed: 'Your items are reserved. Pay to complete the order.',
  paid: "Thank you! We're preparing your order.",
  shipped: 'Your order is on its way.',
  delivered: 'Your order has been delivered.',
  completed: 'This order is complete.',
  cancelled: 'This order was cancelled.',
  refunded: 'This order was refunded: the money goes back to how you paid.',
};

const METHODS: { value: Method; label: string }[] = [
  { value: 'card', label: 'Card' },
  { value: 'bank_transfer', label: 'Bank transfer' },
  { value: 'wallet', label: 'Wallet' },
];

/**
 * One idempotency key per checkout attempt of an order, kept in the tab until the order is paid:
 * a double click, a retry after a lost answer, or a reload mid-payment sends the same key, and
 * the service pays once (client-sdk/README.md, "Retrying safely").
 */
function paymentKey(orderId: number): string {
  const name = `storefront:payment-key:${orderId}`;
  let key = sessionStorage.getItem(name);
  if (key === null) {
    // getRandomValues: randomUUID needs a secure context, which a plain-http preview is not.
    key = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
    sessionStorage.setItem(name, key);
  }
  return key;
}

const forgetPaymentKey = (orderId: number): void => sessionStorage.removeItem(`storefront:payment-key:${orderId}`);

export function OrderPage({ id }: { id: number }) {
  const [order, setOrder] = useState<Order | undefined>();
  const [names, setNames] = useState<Map<number, string>>(new Map());
  const [payments, setPayments] = useState<Payment[]>([]);
  const [fulfillments, setFulfillments] = useState<Fulfillment[]>([]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<'confirm' | 'pay' | 'cancel' | undefined>();
  const [method, setMethod] = useState<Method>('card');
  // Set at once, before any re-render: a double click sends one request, not two.
  const inFlight = useRef(false);

  const load = async (): Promise<Order> => {
    const [fresh, paid, shipped] = await Promise.all([
      client.orders.get.query({ id }),
      client.payments.list.query({ order_id: id }),
      client.fulfillments.list.query({ id }),
    ]);
    setOrder(fresh);
    setPayments(paid.data);
    setFulfillments(shipped.data);
    return fresh;
  };

  useEffect(() => {
    let stopped = false;
    // Live: each change of this order (paid, shipped, a refund...) arrives as an event over
    // server-sent events (orders.onChange), and the page reads the order again. Subscribed before
    // the first read, so nothing falls between; after a dropped connection the client resumes
    // after the last event it heard. A finished order changes no more: the stream closes.
    const subscription = client.orders.onChange.subscribe(
      { order_id: id },
      {
        onData: () => {
          load()
            .then((fresh) => {
              if (DONE.includes(fresh.status)) subscription.unsubscribe();
            })
            .catch(() => undefined);
        },
      },
    );
    load()
      .then(async (fresh) => {
        if (DONE.includes(fresh.status)) subscription.unsubscribe();
        // Calls made together travel in one request (the client batches them).
        const products = await Promise.all(fresh.items.map((item) => client.products.get.query({ id: item.product_id }).catch(() => undefined)));
        if (!stopped) setNames(new Map(products.flatMap((p) => (p ? [[p.id, p.name] as const] : []))));
      })
      .catch((e: unknown) => {
        // The first read failing is the page's news (not found, signed out...).
        if (!stopped) setError(e);
      });
    return () => {
      stopped = true;
      subscription.unsubscribe();
    };
  }, [id]);

  const act = async (what: 'confirm' | 'pay' | 'cancel') => {
    if (inFlight.current || order === undefined) return;
    inFlight.current = true;
    setBusy(what);
    setError(undefined);
    try {
      if (what === 'confirm') setOrder(await client.orders.confirm.mutate({ id }));
      else if (what === 'cancel') setOrder(await client.orders.cancel.mutate({ id }));
      else {
        await client.payments.create.mutate({ order_id: id, amount: order.total, method }, idempotent(paymentKey(id)));
        forgetPaymentKey(id);
      }
      await load();
    } catch (e) {
      setError(e);
      await load().catch(() => undefined);
    } finally {
      inFlight.current = false;
      setBusy(undefined);
    }
  };

  if (order === undefined) {
    return (
      <>
        <PageTitle>Order #{id}</PageTitle>
        {error === undefined ? <Loading what="your order" /> : <ErrorMessage error={error} />}
        <p>
          <Link href="/orders">All your orders</Link>
        </p>
      </>
    );
  }

  const productName = (productId: number) => names.get(productId);

  return (
    <>
      <PageTitle>Order #{order.id}</PageTitle>
      <section aria-labelledby="status-heading" class="status">
        <h2 id="status-heading">Status</h2>
        <p role="status">
          <strong class={`badge badge-${order.status}`} data-status={order.status}>
            {STATUS_LABELS[order.status]}
          </strong>{' '}
          {NEXT_STEP[order.status]}
        </p>
      </section>
      <ErrorMessage error={error} productName={productName} />
      {isProblem(error, 'insufficient-stock') && order._links.confirm && (
        <StockShortage
          order={order}
          productIds={error.problem.product_ids}
          productName={productName}
          busy={busy !== undefined}
          onChange={async (items) => {
            // Lines change only in draft (docs/api.md#orders): the shopper fixes them here, then confirms again.
            // The patch replaces every line from this page's copy of the order, so it is sent only if
            // the order is still that copy (If-Match, docs/api.md#preconditions): a change made
            // meanwhile (another tab) is refused with 412, never overwritten; the page reads it again.
            if (inFlight.current) return;
            inFlight.current = true;
            try {
              setOrder(await client.orders.patch.mutate({ id, format: 'merge-patch', document: { items } }, unchangedSince(await entityTag(order))));
              setError(undefined);
            } catch (e) {
              setError(e);
              if (isProblem(e, 'precondition-failed')) await load().catch(() => undefined);
            } finally {
              inFlight.current = false;
            }
          }}
        />
      )}
      <div class="actions">
        {order._links.confirm && (
          <button type="button" disabled={busy !== undefined} onClick={() => void act('confirm')}>
            {busy === 'confirm' ? 'Confirming…' : 'Confirm order'}
          </button>
        )}
        {order._links.pay && (
          <form
            class="pay"
            onSubmit={(e) => {
              e.preventDefault();
              void act('pay');
            }}
          >
            <label>
              Payment method
              <select value={method} onChange={(e) => setMethod(e.currentTarget.value as Method)}>
                {METHODS.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" disabled={busy !== undefined}>
              {busy === 'pay' ? 'Paying…' : `Pay ${formatMoney(order.total, order.currency)}`}
            </button>
          </form>
        )}
        {order._links.cancel && (
          <button type="button" class="secondary" disabled={busy !== undefined} onClick={() => void act('cancel')}>
            {busy === 'cancel' ? 'Cancelling…' : 'Cancel order'}
          </button>
        )}
      </div>
      <h2>Items</h2>
      <table class="lines">
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">Quantity</th>
            <th scope="col">Price</th>
            <th scope="col">Line total</th>
          </tr>
        </thead>
        <tbody>
          {order.items.map((item) => (
            <tr key={item.product_id}>
              <th scope="row">{productName(item.product_id) ?? `Product #${item.product_id}`}</th>
              <td>{item.quantity}</td>
              <td>{formatMoney(item.unit_price, order.currency)}</td>
              <td>{formatMoney(item.line_total, order.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="total">
        Total: <strong>{formatMoney(order.total, order.currency)}</strong>
      </p>
      <h2>Delivery address</h2>
      <p class="address">{order.address ?? 'None yet'}</p>
      {fulfillments.some((f) => f.tracking_number !== null) && (
        <>
          <h2>Shipping</h2>
          <ul class="shipments">
            {fulfillments.flatMap((f) =>
              f.tracking_number === null ? [] : [
                <li key={f.id}>
                  Sent with {f.carrier ?? 'the carrier'} on {formatTime(f.updated_at)}: tracking number <strong class="tracking">{f.tracking_number}</strong>
                </li>,
              ],
            )}
          </ul>
        </>
      )}
      {payments.length > 0 && (
        <>
          <h2>Payments</h2>
          <ul class="payments">
            {payments.map((payment) => (
              <li key={payment.id}>
                {formatMoney(payment.amount, payment.currency)} by {METHODS.find((m) => m.value === payment.method)?.label ?? payment.method} on{' '}
                {formatTime(payment.created_at)}
              </li>
            ))}
          </ul>
        </>
      )}
      <p>
        <Link href="/orders">All your orders</Link>
      </p>
    </>
  );
}

/**
 * Where a confirmation was refused for stock (409 `insufficient-stock` names the products): each
 * short line with what the shop has now, and the change that fixes it (order what is left, or
 * remove the line), right where the refusal is shown.
 */
function StockShortage({
  order,
  productIds,
  productName,
  busy,
  onChange,
}: {
  order: Order;
  productIds: readonly number[];
  productName: (id: number) => string | undefined;
  busy: boolean;
  onChange: (items: { product_id: number; quantity: number }[]) => Promise<void>;
}) {
  const [stock, setStock] = useState<Map<number, number>>(new Map());
  useEffect(() => {
    let current = true;
    void Promise.all(productIds.map((pid) => client.products.get.query({ id: pid }).catch(() => undefined))).then((products) => {
      if (current) setStock(new Map(products.flatMap((p) => (p ? [[p.id, p.stock] as const] : []))));
    });
    return () => {
      current = false;
    };
  }, [productIds.join(',')]);

  const change = (productId: number, quantity: number) =>
    onChange(order.items.flatMap((item) => (item.product_id !== productId ? [{ product_id: item.product_id, quantity: item.quantity }] : quantity > 0 ? [{ product_id: productId, quantity }] : [])));

  return (
    <ul class="shortages" aria-label="Items short of stock">
      {order.items
        .filter((item) => productIds.includes(item.product_id))
        .map((item) => {
          const name = productName(item.product_id) ?? `Product #${item.product_id}`;
          const left = stock.get(item.product_id);
          return (
            <li key={item.product_id}>
              {name}: {item.quantity} in this order, {left === undefined ? 'checking the stock…' : left > 0 ? `${left} in stock` : 'none left'}.{' '}
              {left !== undefined && left > 0 && left < item.quantity && (
                <button type="button" disabled={busy} onClick={() => void change(item.product_id, left)}>
                  Order {left} instead
                </button>
              )}{' '}
              {left !== undefined && order.items.length > 1 && (
                <button type="button" class="secondary" disabled={busy} onClick={() => void change(item.product_id, 0)}>
                  Remove {name}
                </button>
              )}
            </li>
          );
        })}
    </ul>
  );
}

/**
 * One order for an operator: its items, address, payments with their refunds, fulfillments, and
 * the moves its status allows. The buttons follow the order's `_links` (confirm, cancel, send to
 * fulfillment) and its status (ship a paid order, mark a shipped one delivered, a delivered one
 * completed), so the page never offers what the service would refuse.
 */
import { idempotent, isProblem, type RouterOutputs } from '@order-service/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CustomerLink, ErrorMessage, formatTime, Link, Loading, newKey, Notice, PageTitle, StatusBadge } from '../components.tsx';
import { formatMoney, inputStep, toMajorInput, toMinor } from '../money.ts';
import { client } from '../session.ts';

type Order = RouterOutputs['orders']['get'];
type Payment = RouterOutputs['payments']['list']['data'][number];
type Fulfillment = RouterOutputs['fulfillments']['list']['data'][number];
type Reason = NonNullable<RouterOutputs['refunds']['get']['reason']>;

const REASONS: Reason[] = ['requested_by_customer', 'duplicate', 'fraudulent', 'other'];
type Outcome = 'done' | 'refused' | 'unknown' | 'busy';

const REFUNDABLE = new Set(['paid', 'shipped', 'delivered', 'completed']);

export function OrderPage({ id }: { id: number }) {
  const [order, setOrder] = useState<Order | undefined>();
  const [payments, setPayments] = useState<Payment[]>([]);
  const [fulfillments, setFulfillments] = useState<Fulfillment[]>([]);
  const [names, setNames] = useState<Map<number, string>>(new Map());
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);

  const load = async () => {
    const [fresh, paid, shipped] = await Promise.all([
      client.orders.get.query({ id, expand: ['customer'] }),
      client.payments.list.query({ order_id: id }),
      client.fulfillments.list.query({ id }),
    ]);
    setOrder(fresh);
    setPayments(paid.data);
    setFulfillments(shipped.data);
    return fresh;
  };

  useEffect(() => {
    load()
      .then(async (fresh) => {
        // Calls made together travel in one request (the client batches them).
        const products = await Promise.all(fresh.items.map((item) => client.products.get.query({ id: item.product_id }).catch(() => undefined)));
        setNames(new Map(products.flatMap((p) => (p ? [[p.id, p.name] as const] : []))));
      })
      .catch((e: unknown) => setError(e));
  }, [id]);

  /**
   * Runs one action at a time (a double click sends one request), then reads the order again.
   * Answers how it ended: `unknown` when no answer came (a lost connection, a 5xx).
   */
  const act = async (done: string, action: () => Promise<unknown>): Promise<Outcome> => {
    if (inFlight.current) return 'busy';
    inFlight.current = true;
    setBusy(true);
    setError(undefined);
    setNotice('');
    try {
      await action();
      await load();
      setNotice(done);
      return 'done';
    } catch (e) {
      setError(e);
      return isProblem(e) && e.status < 500 ? 'refused' : 'unknown';
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };

  if (order === undefined) {
    return (
      <>
        <PageTitle>Order #{id}</PageTitle>
        {error === undefined ? <Loading what="the order" /> : <ErrorMessage error={error} />}
        <p>
          <Link href="/">All orders</Link>
        </p>
      </>
    );
  }

  const links = order._links;
  return (
    <>
      <PageTitle>Order #{order.id}</PageTitle>
      <p>
        <StatusBadge status={order.status} /> · customer <CustomerLink id={order.customer_id} customer={order.customer} /> · placed {formatTime(order.created_at)} · changed {formatTime(order.updated_at)}
      </p>
      <ErrorMessage error={error} />
      <Notice text={notice} />

      <section aria-labelledby="actions">
        <h2 id="actions">Actions</h2>
        <div class="actions">
          {links.confirm && (
            <button type="button" disabled={busy} onClick={() => void act('Confirmed.', () => client.orders.confirm.mutate({ id }))}>
              Confirm
            </button>
          )}
          {links['send-to-fulfillment'] && fulfillments.every((f) => f.status !== 'requested') && (
            <button type="button" disabled={busy} onClick={() => void act('Sent to fulfillment.', () => client.fulfillments.request.mutate({ id }))}>
              Send to fulfillment
            </button>
          )}
          {order.status === 'shipped' && (
            <button type="button" disabled={busy} onClick={() => void act('Marked delivered.', () => client.orders.patch.mutate({ id, format: 'merge-patch', document: { status: 'delivered' } }))}>
              Mark delivered
            </button>
          )}
          {order.status === 'delivered' && (
            <button type="button" disabled={busy} onClick={() => void act('Marked completed.', () => client.orders.patch.mutate({ id, format: 'merge-patch', document: { status: 'completed' } }))}>
              Mark completed
            </button>
          )}
          {links.cancel && (
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => {
                if (order.status !== 'paid' || confirm('Cancel this paid order? Its payment is refunded in full.')) void act('Cancelled.', () => client.orders.cancel.mutate({ id }));
              }}
            >
              Cancel order
            </button>
          )}
        </div>
        {order.status === 'paid' && <ShipForm busy={busy} onShip={(carrier, tracking) => act('Shipped.', () => client.fulfillments.create.mutate({ id, carrier, tracking_number: tracking }))} />}
      </section>

      <section aria-labelledby="items">
        <h2 id="items">Items</h2>
        <table class="lines">
          <thead>
            <tr>
              <th scope="col">Product</th>
              <th scope="col">Quantity</th>
              <th scope="col">Unit price</th>
              <th scope="col">Line total</th>
            </tr>
          </thead>
          <tbody>
            {order.items.map((item) => (
              <tr key={item.product_id}>
                <th scope="row">
                  <Link href={`/products/${item.product_id}`}>{names.get(item.product_id) ?? `Product #${item.product_id}`}</Link>
                </th>
                <td>{item.quantity}</td>
                <td>{formatMoney(item.unit_price, order.currency)}</td>
                <td>{formatMoney(item.line_total, order.currency)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row" colSpan={3}>
                Total
              </th>
              <td>{formatMoney(order.total, order.currency)}</td>
            </tr>
          </tfoot>
        </table>
        <p>
          <strong>Address:</strong> <span class="address">{order.address ?? 'none yet'}</span>
        </p>
      </section>

      <section aria-labelledby="payments">
        <h2 id="payments">Payments</h2>
        {payments.length === 0 && <p>No payment.</p>}
        {payments.map((payment) => (
          <div class="card" key={payment.id}>
            <p>
              Payment #{payment.id}: {formatMoney(payment.amount, payment.currency)} by {payment.method.replace('_', ' ')}, {formatTime(payment.created_at)}
              {payment.amount_refunded > 0 && `; ${formatMoney(payment.amount_refunded, payment.currency)} refunded`}
            </p>
            {REFUNDABLE.has(order.status) && payment.amount_refunded < payment.amount && (
              <RefundForm
                payment={payment}
                delivered={order.status === 'delivered' || order.status === 'completed'}
                busy={busy}
                onRefund={(amount, reason, restock, key) =>
                  act('Refunded.', () => client.refunds.create.mutate({ id: payment.id, amount, reason, restock }, idempotent(key)))
                }
              />
            )}
          </div>
        ))}
      </section>

      <section aria-labelledby="fulfillments">
        <h2 id="fulfillments">Fulfillments</h2>
        {fulfillments.length === 0 && <p>None.</p>}
        <ul>
          {fulfillments.map((f) => (
            <li key={f.id}>
              #{f.id}: {f.status}
              {f.carrier !== null && `, ${f.carrier} ${f.tracking_number ?? ''}`}, {formatTime(f.created_at)}
            </li>
          ))}
        </ul>
      </section>
      <p>
        <Link href="/">All orders</Link>
      </p>
    </>
  );
}

function ShipForm({ busy, onShip }: { busy: boolean; onShip: (carrier: string, tracking: string) => Promise<Outcome> }) {
  const [carrier, setCarrier] = useState('');
  const [tracking, setTracking] = useState('');
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void onShip(carrier.trim(), tracking.trim());
      }}
    >
      <label>
        Carrier
        <input value={carrier} required maxLength={100} onInput={(e) => setCarrier(e.currentTarget.value)} />
      </label>
      <label>
        Tracking number
        <input value={tracking} required maxLength={100} onInput={(e) => setTracking(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Ship
      </button>
    </form>
  );
}

function RefundForm({
  payment,
  delivered,
  busy,
  onRefund,
}: {
  payment: Payment;
  delivered: boolean;
  busy: boolean;
  onRefund: (amount: number, reason: Reason, restock: boolean, key: string) => Promise<Outcome>;
}) {
  const remaining = payment.amount - payment.amount_refunded;
  // Typed in the currency's major unit, as the page shows money ("51.00", not 5100).
  const [amount, setAmount] = useState(toMajorInput(remaining, payment.currency));
  const [amountError, setAmountError] = useState('');
  const [reason, setReason] = useState<Reason>('requested_by_customer');
  const [restock, setRestock] = useState(false);
  // One key per refund until the service answers: a retry after a lost answer sends the same key,
  // so the money goes back once; after a refund or a refusal the next try is a new request.
  const key = useRef(newKey());
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        const minor = toMinor(amount, payment.currency);
        if (minor === undefined) {
          setAmountError(`Enter an amount in ${payment.currency} such as ${toMajorInput(remaining, payment.currency)}.`);
          return;
        }
        setAmountError('');
        void onRefund(minor, reason, restock, key.current).then((outcome) => {
          if (outcome === 'done' || outcome === 'refused') key.current = newKey();
        });
      }}
    >
      <label>
        Refund ({payment.currency}, at most {formatMoney(remaining, payment.currency)})
        <input
          type="number"
          min={inputStep(payment.currency)}
          max={toMajorInput(remaining, payment.currency)}
          step={inputStep(payment.currency)}
          required
          value={amount}
          onInput={(e) => setAmount(e.currentTarget.value)}
          {...(amountError === '' ? {} : { 'aria-invalid': true, 'aria-describedby': `refund-error-${payment.id}` })}
        />
      </label>
      {amountError !== '' && (
        <p class="field-error" id={`refund-error-${payment.id}`}>
          {amountError}
        </p>
      )}
      <label>
        Reason
        <select value={reason} onChange={(e) => setReason(e.currentTarget.value as Reason)}>
          {REASONS.map((r) => (
            <option key={r} value={r}>
              {r.replaceAll('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      {delivered && (
        <label class="checkbox">
          <input type="checkbox" checked={restock} onChange={(e) => setRestock(e.currentTarget.checked)} /> Put the items back in stock
        </label>
      )}
      <button type="submit" disabled={busy}>
        Refund
      </button>
    </form>
  );
}

/** The shopper's orders, newest first (the service lists a customer's own orders only). */
import type { RouterOutputs } from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, Link, Loading, PageTitle } from '../components.tsx';
import { formatTime } from '../dates.ts';
import { STATUS_LABELS } from '../messages.ts';
import { formatMoney } from '../money.ts';
import { client, signIn, useSignedIn } from '../session.ts';

type Order = RouterOutputs['orders']['list']['data'][number];

export function Orders() {
  const signedIn = useSignedIn();
  const [orders, setOrders] = useState<Order[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    if (!signedIn) return;
    client.orders.list
      .query({ limit: 20 })
      .then((page) => {
        setOrders(page.data);
        setNext(page.next_cursor);
      })
      .catch((e: unknown) => setError(e));
  }, [signedIn]);

  const more = async () => {
    if (next === null) return;
    try {
      const page = await client.orders.list.query({ limit: 20, cursor: next });
      setOrders((shown) => [...(shown ?? []), ...page.data]);
      setNext(page.next_cursor);
    } catch (e) {
      setError(e);
    }
  };

  if (!signedIn) {
    return (
      <>
        <PageTitle>Your orders</PageTitle>
        <p>Sign in to see your orders.</p>
        <button type="button" onClick={() => void signIn()}>
          Sign in
        </button>
      </>
    );
  }

  return (
    <>
      <PageTitle>Your orders</PageTitle>
      <ErrorMessage error={error} />
      {orders === undefined && error === undefined && <Loading what="your orders" />}
      {orders?.length === 0 && (
        <p>
          No orders yet. <Link href="/">Browse the products</Link>.
        </p>
      )}
      {orders !== undefined && orders.length > 0 && (
        <table class="lines orders">
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Placed</th>
              <th scope="col">Status</th>
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {orders.map((order) => (
              <tr key={order.id}>
                <th scope="row">
                  <Link href={`/orders/${order.id}`}>Order #{order.id}</Link>
                </th>
                <td>{formatTime(order.created_at)}</td>
                <td>
                  <span class={`badge badge-${order.status}`}>{STATUS_LABELS[order.status]}</span>
                </td>
                <td>{formatMoney(order.total, order.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null && (
        <button type="button" class="secondary" onClick={() => void more()}>
          More orders
        </button>
      )}
    </>
  );
}

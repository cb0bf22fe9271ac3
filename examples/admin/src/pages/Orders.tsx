/**
 * Every order, newest first, filtered by status and customer (kept in the address, so a filtered
 * view can be shared), each with its customer's name and email (`expand=customer`, read with the
 * page, not one request per row).
 */
import type { RouterInputs, RouterOutputs } from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';
import { CustomerLink, ErrorMessage, formatTime, Link, Loading, PageTitle, StatusBadge } from '../components.tsx';
import { STATUSES } from '../messages.ts';
import { formatMoney } from '../money.ts';
import { navigate } from '../router.ts';
import { client } from '../session.ts';

type Order = RouterOutputs['orders']['list']['data'][number];
type Query = NonNullable<RouterInputs['orders']['list']>;

const PAGE = 25;
const FILTERS = ['active', ...STATUSES] as const;

export function Orders({ search }: { search: string }) {
  const params = new URLSearchParams(search);
  const status = params.get('status') ?? '';
  const customerParam = params.get('customer_id') ?? '';
  const customerId = /^[1-9]\d{0,9}$/.test(customerParam) ? Number(customerParam) : undefined;
  /** The list's address for a status and a customer. */
  const listHref = (nextStatus: string, nextCustomer: number | undefined): string => {
    const query = new URLSearchParams({ ...(nextStatus === '' ? {} : { status: nextStatus }), ...(nextCustomer === undefined ? {} : { customer_id: String(nextCustomer) }) }).toString();
    return query === '' ? '/' : `/?${query}`;
  };
  const [orders, setOrders] = useState<Order[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();

  const query = (cursor?: string): Query => ({
    limit: PAGE,
    expand: ['customer'],
    ...(status === '' ? {} : { status }),
    ...(customerId === undefined ? {} : { customer_id: customerId }),
    ...(cursor === undefined ? {} : { cursor }),
  });

  useEffect(() => {
    setOrders(undefined);
    setError(undefined);
    client.orders.list
      .query(query())
      .then((page) => {
        setOrders(page.data);
        setNext(page.next_cursor);
      })
      .catch((e: unknown) => setError(e));
  }, [status, customerId]);

  const more = async () => {
    if (next === null) return;
    try {
      const page = await client.orders.list.query(query(next));
      setOrders((shown) => [...(shown ?? []), ...page.data]);
      setNext(page.next_cursor);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <PageTitle>Orders</PageTitle>
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={(event) => navigate(listHref(event.currentTarget.value, customerId))}>
            <option value="">All</option>
            {FILTERS.map((s) => (
              <option key={s} value={s}>
                {s === 'active' ? 'active (confirmed to delivered)' : s}
              </option>
            ))}
          </select>
        </label>
      </div>
      {customerId !== undefined && (
        <p>
          Orders of <CustomerLink id={customerId} customer={orders?.[0]?.customer} /> · <Link href={listHref(status, undefined)}>Every customer</Link>
        </p>
      )}
      <ErrorMessage error={error} />
      {orders === undefined && error === undefined && <Loading what="orders" />}
      {orders?.length === 0 && <p>No orders{status === '' ? '' : ` with status ${status}`}.</p>}
      {orders !== undefined && orders.length > 0 && (
        <table class="lines">
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Customer</th>
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
                <td>
                  <CustomerLink id={order.customer_id} customer={order.customer} />
                </td>
                <td>{formatTime(order.created_at)}</td>
                <td>
                  <StatusBadge status={order.status} />
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

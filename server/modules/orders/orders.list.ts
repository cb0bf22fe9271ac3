/**
 * The order list (docs/api.md#lists-and-paging): its sorts, its filters and the prepared
 * statement of each shape they make, and `listOrders`, which pages it (modules/paging.ts) and
 * reads each page's lines in one statement more.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { ownCustomerId } from '../../auth/policy.ts';
import { shapedStatements, statements } from '../../db/statements.ts';
import { clip, DomainError } from '../../errors/problems.ts';
import type { Page } from '../common.schemas.ts';
import { keyPlaceholders, keysetCondition, keysetOrder, keyValues, listPage, type CursorCodec, type PageRequest, type SortTerm } from '../paging.ts';
import { expandOrders } from './orders.expand.ts';
import type { ItemRow } from './orders.representation.ts';
import { normalizeStatus, type OrderStatus } from './orders.rules.ts';
import { ORDER_SORTS, type Order, type OrderListQuery, type OrderSort } from './orders.schemas.ts';
import { itemColumns, orderColumns, represent, type Access } from './orders.service.ts';
import { isActiveOrder, orderItems, orders } from './orders.table.ts';

type StatusFilter = 'any' | 'active' | OrderStatus;

type ListRow = typeof orders.$inferSelect;

/** Each sort's terms: one direction for every term, so a page is one index range (the id breaks ties). */
const SORT_COLUMNS: Record<'created_at' | 'updated_at' | 'total', Omit<SortTerm<ListRow>, 'descending'>> = {
  created_at: { column: orders.createdAt, kind: 'instant', read: (row) => row.createdAt.toISOString() },
  updated_at: { column: orders.updatedAt, kind: 'instant', read: (row) => row.updatedAt.toISOString() },
  total: { column: orders.total, kind: 'bigint', read: (row) => row.total },
};
const idTerm: Omit<SortTerm<ListRow>, 'descending'> = { column: orders.id, kind: 'integer', read: (row) => row.id };

const SORT_TERMS = new Map<OrderSort, SortTerm<ListRow>[]>(
  ORDER_SORTS.map((sort) => {
    const descending = sort.startsWith('-');
    const field = SORT_COLUMNS[(descending ? sort.slice(1) : sort) as keyof typeof SORT_COLUMNS];
    return [sort, [{ ...field, descending }, { ...idTerm, descending }]];
  }),
);
const DEFAULT_SORT: OrderSort = '-created_at';

function sortTermsOf(sort: string | undefined): SortTerm<ListRow>[] {
  const terms = SORT_TERMS.get((sort ?? DEFAULT_SORT) as OrderSort);
  if (terms === undefined) {
    const allowed = ORDER_SORTS.join(', ');
    throw new DomainError('malformed-request', `Unknown sort "${clip(String(sort), 64)}". Allowed: ${allowed}.`, {
      errors: [{ field: 'sort', message: `must be one of ${allowed}` }],
    });
  }
  return terms;
}

/** What selects a list's rows besides the caller: each optional filter present or not. */
interface ListShape {
  whose: 'all' | 'own';
  status: StatusFilter;
  sort: OrderSort;
  metadata: boolean;
  createdGte: boolean;
  createdLt: boolean;
  direction: PageRequest['direction'];
}

/** A shape's name: its statement's, and its key among the statements built. */
const shapeKey = (shape: ListShape): string =>
  [shape.whose, shape.status, shape.sort, shape.metadata ? 'm' : '', shape.createdGte ? 'g' : '', shape.createdLt ? 'l' : '', shape.direction].join(':');

/**
 * One statement per shape: everyone's or one customer's orders; by no status, `active`, or one
 * status; with or without a metadata containment and each bound of the creation range; in one of
 * the six sorts; from a page number or at a cursor's key (a closed set, built on first use). Each
 * sort has its index, everyone's and a customer's; the metadata filter its GIN index
 * (server/db/schema.ts; test/db/list-plans.test.ts), so a page costs the same at any depth by
 * cursor. The status is written into the statement, not bound (a closed set of eight): a
 * prepared statement's generic plan, planned for any status, walked every order in time order
 * filtering the status, which for a rare status reads the whole table.
 */
const orderList = shapedStatements('order_list', shapeKey, (db, shape: ListShape) => {
  const terms = sortTermsOf(shape.sort);
  const filters = [];
  if (shape.whose === 'own') filters.push(eq(orders.customerId, sql.placeholder('customerId')));
  if (shape.status === 'active') filters.push(isActiveOrder(orders.status));
  else if (shape.status !== 'any') filters.push(eq(orders.status, sql.raw(`'${shape.status}'`)));
  if (shape.metadata) filters.push(sql`${orders.metadata} @> ${sql.placeholder('metadata')}::jsonb`);
  if (shape.createdGte) filters.push(sql`${orders.createdAt} >= ${sql.placeholder('createdGte')}::timestamptz`);
  if (shape.createdLt) filters.push(sql`${orders.createdAt} < ${sql.placeholder('createdLt')}::timestamptz`);
  if (shape.direction !== 'first') filters.push(keysetCondition(terms, shape.direction, keyPlaceholders(terms.length)));
  const matching = db.select(orderColumns).from(orders).where(and(...filters));
  // The metadata filter finds its orders first, through the GIN index, and sorts those: an
  // `offset 0` subquery is not merged into the outer query, so a generic plan (which cannot know
  // how rare the value is) never walks a sort index filtering every order by containment. Named
  // `orders`, so the sort's columns name the subquery's. (The offset is bound: drizzle leaves out a literal 0.)
  const source = shape.metadata ? matching.offset(sql.placeholder('fence')).as('orders') : undefined;
  const query = source ? db.select(orderColumns).from(source) : matching;
  return query
    .orderBy(...keysetOrder(terms, shape.direction))
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'));
});

/** The lines of `count` orders (1 to a page's limit): one statement per count. */
const linesOf = statements('order_lines_of', (db, count: number) =>
  db
    .select(itemColumns)
    .from(orderItems)
    .where(
      inArray(
        orderItems.orderId,
        Array.from({ length: count }, (_, i) => sql.placeholder(`id${i}`)),
      ),
    ),
);

export async function listOrders({ db, caller, query, cursors }: Access & { query: OrderListQuery; cursors: CursorCodec }): Promise<Page<Order>> {
  const own = ownCustomerId(caller);
  // A customer lists only their own orders: naming themself changes nothing, naming another is refused.
  if (own !== undefined && query.customer_id !== undefined && query.customer_id !== own) {
    throw new DomainError('forbidden', "Customers list only their own orders: customer_id may name only you.");
  }
  const customerId = own ?? query.customer_id;
  let statusShape: StatusFilter = 'any';
  let status: OrderStatus | undefined;
  if (query.status !== undefined) {
    if (query.status.toLowerCase() === 'active') {
      statusShape = 'active';
    } else {
      status = normalizeStatus(query.status);
      if (!status) {
        throw new DomainError('validation-error', `Unknown status "${query.status}".`, {
          errors: [{ field: 'status', message: 'must be an order status (any case), an upper-case alias, or active' }],
        });
      }
      statusShape = status;
    }
  }
  const sort = query.sort ?? DEFAULT_SORT;
  const terms = sortTermsOf(sort);
  // An empty metadata object (/trpc) filters nothing. Keys in one order, so the filter has one spelling.
  const metadata = query.metadata && Object.keys(query.metadata).length > 0 ? JSON.stringify(Object.fromEntries(Object.entries(query.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))) : undefined;
  // A cursor is good for the same filters and sort, whatever the status's spelling (`PAID`, `paid`);
  // the list as it was before sorts and filters keeps its cursors' binding.
  const extra = [query.customer_id ?? null, query.created_gte ?? null, query.created_lt ?? null, metadata ?? null, sort];
  const plain = extra.slice(0, 4).every((value) => value === null) && sort === DEFAULT_SORT;
  const binding = `orders:${status === undefined ? statusShape : 'status'}:${status ?? ''}${plain ? '' : `:${JSON.stringify(extra)}`}`;
  const byOrder = new Map<number, ItemRow[]>();
  const page = await listPage(
    { cursors, binding, terms, query },
    async (window) => {
      const shape: ListShape = {
        whose: customerId === undefined ? 'all' : 'own',
        status: statusShape,
        sort,
        metadata: metadata !== undefined,
        createdGte: query.created_gte !== undefined,
        createdLt: query.created_lt !== undefined,
        direction: window.request.direction,
      };
      const rows = await orderList(shape, db, {
        customerId,
        metadata,
        createdGte: query.created_gte,
        createdLt: query.created_lt,
        fence: 0,
        limit: window.limit,
        offset: window.offset,
        ...keyValues(window.request),
      });
      // The page's lines in one statement.
      const ids = rows.slice(0, query.limit).map((row) => row.id);
      const items = ids.length ? await linesOf(ids.length, db, Object.fromEntries(ids.map((id, i) => [`id${i}`, id]))) : [];
      for (const item of items) byOrder.set(item.orderId, [...(byOrder.get(item.orderId) ?? []), item]);
      return rows;
    },
    (row) => represent({ row, items: byOrder.get(row.id) ?? [] }),
  );
  // Expansions after the page is read: one statement each for the whole page (orders.expand.ts).
  return { ...page, data: await expandOrders({ db, caller, orders: page.data, expand: query.expand }) };
}

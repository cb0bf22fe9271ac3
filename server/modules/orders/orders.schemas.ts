import { z } from 'zod';
import {
  Currency,
  Id,
  Link,
  listOf,
  MAX_LINE_TOTAL,
  MAX_LINES,
  MAX_ORDER_TOTAL,
  MAX_PRICE,
  MAX_QUANTITY,
  Metadata,
  metadataFilter,
  patchInput,
  type MetadataMergePatch,
  PageQuery,
  pageExample,
  queryList,
  readOnly,
  requestExample,
  responseExample,
  text,
  Timestamp,
} from '../common.schemas.ts';
import { Fulfillment } from '../fulfillments/fulfillments.schemas.ts';
import { Payment } from '../payments/payments.schemas.ts';
import { Product } from '../products/products.schemas.ts';
import { User } from '../users/users.schemas.ts';
import { orderLinks } from './orders.links.ts';
import { ORDER_STATUSES, normalizeStatus, type OrderStatus } from './orders.rules.ts';

export const OrderStatusValue = z.enum(ORDER_STATUSES).meta({ id: 'OrderStatus', description: 'An order status (always lower-case in answers).' });

/** `draft` -> `[dD][rR][aA][fF][tT]`: a case-insensitive word in a pattern every JSON Schema tool reads. */
const anyCase = (word: string): string =>
  [...word].map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`)).join('');
const wordsPattern = (words: readonly string[]): RegExp => new RegExp(`^(?:${words.map(anyCase).join('|')})$`);

/** What a status input may say: a status or the upper-case schema's alias (`created` = draft), in any case. */
const STATUS_WORDS: readonly string[] = [...ORDER_STATUSES, 'created'];
const STATUS_MESSAGE = `must be one of ${ORDER_STATUSES.join(', ')} (any case; CREATED = draft)`;

/** The upper-case schema's names (docs/api.md#order-states), accepted beside the canonical statuses. */
const UPPER_CASE_NAMES = ['CREATED', 'CONFIRMED', 'PAID', 'SHIPPED', 'CANCELLED'] as const;

/**
 * In the OpenAPI document, a status input is the closed set of words it takes (an enum a client
 * can offer), or the same words in any other case (the pattern the service checks).
 */
const closedSetInAnyCase =
  (words: readonly string[]) =>
  ({ jsonSchema }: { jsonSchema: Record<string, unknown> }): void => {
    const { pattern, type } = jsonSchema;
    delete jsonSchema.pattern;
    delete jsonSchema.type;
    jsonSchema.anyOf = [
      { type, enum: words },
      { type, pattern, description: 'The same words in any case.' },
    ];
  };

const statusInput = (words: readonly string[], message: string, meta: { description: string; example: string }) =>
  z
    .string()
    .regex(wordsPattern(words), message)
    .transform((value, ctx): OrderStatus => {
      const status = normalizeStatus(value);
      if (status === undefined) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return status;
    })
    .meta({ ...meta, override: closedSetInAnyCase([...ORDER_STATUSES, ...UPPER_CASE_NAMES].filter((word) => words.includes(word.toLowerCase()))) });

/** Status input: any case, `CREATED` for draft; answered in lower case. */
export const StatusInput = statusInput(STATUS_WORDS, STATUS_MESSAGE, {
  description: 'Order status, any case; upper-case aliases accepted (CREATED = draft).',
  example: 'confirmed',
});

/** A new order is always a draft: the only status its body may name. */
const CreateStatusInput = statusInput(
  STATUS_WORDS.filter((word) => normalizeStatus(word) === 'draft'),
  'must be draft (or omitted) when an order is created',
  { description: 'Only draft (the default; any case, or CREATED) is accepted.', example: 'draft' },
);

/**
 * Each of the order's own links is offered exactly when its move is allowed (the state table
 * decides); other modules add theirs (orders.links.ts), such as `notes`.
 */
const OrderLinks = z
  .object({
    self: Link,
    confirm: Link.optional().meta({ description: 'While draft.' }),
    cancel: Link.optional().meta({ description: 'While draft, confirmed or paid (cancelling a paid order refunds it in full).' }),
    pay: Link.optional().meta({ description: 'POST /api/v1/payments with the order id in the body, while confirmed.' }),
    'send-to-fulfillment': Link.optional().meta({ description: 'While paid.' }),
    fulfillments: Link.optional().meta({ description: 'From paid on.' }),
  })
  // Links other modules add (orders.links.ts): each is documented as a member when the document is built.
  .catchall(Link)
  .meta({
    id: 'OrderLinks',
    override: ({ jsonSchema }) => orderLinks.document(jsonSchema as Record<string, unknown>, jsonSchema.additionalProperties as Record<string, unknown>),
  });

const Quantity = z.int().min(1).max(MAX_QUANTITY);
const UnitPrice = z.int().min(0).max(MAX_PRICE).meta({ description: "The product's price when the item was set (minor units)." });
const LineTotal = z.int().min(0).max(MAX_LINE_TOTAL).meta({ description: 'unit_price x quantity.' });
const Total = z.int().min(0).max(MAX_ORDER_TOTAL).meta({ description: 'Sum of line_total, minor units.' });

/** What `expand` may ask of an order (docs/api.md#expand). */
export const EXPANSIONS = ['items.product', 'customer', 'payments', 'fulfillments'] as const;
export type Expansion = (typeof EXPANSIONS)[number];

/** More values than there are expansions only repeat them; this bounds the input anyway. */
const MAX_EXPAND_VALUES = 20;

const Expand = queryList(EXPANSIONS, MAX_EXPAND_VALUES, {
  description:
    'Related resources to embed, a comma list or the parameter repeated: `items.product` (each item gains `product`), `customer`, `payments`, `fulfillments`. ' +
    'Duplicates are ignored; any other value, or an empty one, is 400 naming these. Without it the order is as always.',
  example: ['items.product', 'customer'],
});

/*
 * The expanded fields are optional in the output type: a tRPC procedure has one output type
 * whatever its input holds, so the typed client cannot make them present exactly when asked for
 * (docs/api.md#expand).
 */
const ExpandedProduct = Product.optional().meta({ description: 'With `expand=items.product`: the product as `GET /products/{id}` answers it (archived ones too).' });
const ExpandedCustomer = User.nullable()
  .optional()
  .meta({ description: 'With `expand=customer`: the user as `GET /users/{id}` answers it; `null` when the caller may not read that user.' });
const ExpandedPayments = z
  .array(Payment)
  .optional()
  .meta({ description: "With `expand=payments`: the order's payments, newest first, as `GET /payments/{id}` answers them." });
const ExpandedFulfillments = z
  .array(Fulfillment)
  .optional()
  .meta({ description: "With `expand=fulfillments`: the order's fulfillments, newest first, as `GET /orders/{id}/fulfillments/{fulfillmentId}` answers them." });

export const OrderItem = z.object({ product_id: Id, quantity: Quantity, unit_price: UnitPrice, line_total: LineTotal, product: ExpandedProduct });

export const Order = z
  .object({
    id: Id,
    customer_id: Id,
    items: z.array(OrderItem).max(MAX_LINES),
    address: z.string().max(500).nullable(),
    status: OrderStatusValue,
    discount_code: z.string().nullable(),
    currency: Currency,
    total: Total,
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
    customer: ExpandedCustomer,
    payments: ExpandedPayments,
    fulfillments: ExpandedFulfillments,
    _links: OrderLinks,
  })
  .meta({ id: 'Order' });
export type Order = z.infer<typeof Order>;

/** The most lines an order may have (docs/api.md#field-rules bounds quantities; this bounds the lines). */
export const MAX_ITEMS = MAX_LINES;

// A delivery address is written on several lines (a storefront's address box has rows): tab and
// line breaks are kept, every other control character is refused (docs/api.md#field-rules).
const Address = text(0, 500, { multiline: true }).nullable();
const DiscountCode = z
  .string()
  .regex(/^[A-Z0-9_-]{3,32}$/, 'must be 3-32 characters of A-Z, 0-9, _ and -')
  .nullable();

export const OrderItemInput = z.strictObject({ product_id: Id, quantity: Quantity });

export const OrderCreate = z
  .strictObject({
    customer_id: Id.optional().meta({ description: 'Required for admins; a customer may omit it (themself).' }),
    items: z.array(OrderItemInput).max(MAX_ITEMS),
    address: Address.optional(),
    discount_code: DiscountCode.optional(),
    currency: Currency.optional(),
    status: CreateStatusInput.optional(),
    metadata: Metadata.optional(),
  })
  .meta({ id: 'OrderInput' });
export type OrderCreate = z.infer<typeof OrderCreate>;

/** An item as PUT and PATCH see it: the read-only fields of a read item (expanded ones too) may come back, ignored. */
const OrderItemReplace = z.strictObject({
  product_id: Id,
  quantity: Quantity,
  unit_price: readOnly(UnitPrice),
  line_total: readOnly(LineTotal),
  product: readOnly(Product),
});

/** The writable document of an order: what PUT sends and what a patch must produce. */
export const OrderDocument = z.strictObject({
  customer_id: Id.optional(),
  items: z.array(OrderItemReplace).max(MAX_ITEMS).optional(),
  address: Address.optional(),
  discount_code: DiscountCode.optional(),
  currency: Currency.optional(),
  status: StatusInput.optional(),
  metadata: Metadata.optional(),
  id: readOnly(Id),
  total: readOnly(Total),
  created_at: readOnly(Timestamp),
  updated_at: readOnly(Timestamp),
  customer: readOnly(User.nullable()),
  payments: readOnly(z.array(Payment)),
  fulfillments: readOnly(z.array(Fulfillment)),
  _links: readOnly(OrderLinks),
});
export type OrderDocument = z.infer<typeof OrderDocument>;

/** What a patch must leave: the required fields cannot be nulled or removed. */
export const PatchedOrderDocument = OrderDocument.extend({
  customer_id: Id,
  items: z.array(OrderItemReplace).max(MAX_ITEMS),
  currency: Currency,
  status: StatusInput,
});

export const OrderReplace = OrderDocument.extend({ id: Id });
export type OrderReplace = z.infer<typeof OrderReplace>;

/**
 * A merge patch (RFC 7396): members of the order's writable document; `null` removes a nullable
 * one, and a metadata key set to `null` is removed (the others are kept).
 */
export type OrderMergePatch = Omit<z.input<typeof OrderDocument>, 'metadata'> & { metadata?: MetadataMergePatch };

export const OrderPatch = patchInput<OrderMergePatch>();
export type OrderPatch = z.infer<typeof OrderPatch>;

/** The order list's sorts (docs/api.md#lists-and-paging): a field, `-` for descending; the id breaks ties. */
export const ORDER_SORTS = ['created_at', '-created_at', 'updated_at', '-updated_at', 'total', '-total'] as const;
export type OrderSort = (typeof ORDER_SORTS)[number];

/**
 * A `sort` is any text to the schema, typed as the six sorts: one outside them is 400 listing
 * them (the service says so, docs/api.md#lists-and-paging), as a client that asks for an order
 * the list cannot give is a malformed request, not a bad value of a field.
 */
const SortInput = z
  .custom<OrderSort>((value) => typeof value === 'string' && value.length <= 64, 'must be one of ' + ORDER_SORTS.join(', '))
  .meta({
    example: '-total',
    override: ({ jsonSchema }) => {
      Object.assign(jsonSchema, { type: 'string', enum: [...ORDER_SORTS] });
    },
  });

/** An RFC 3339 instant with `Z` or an offset; year 0000 is no year PostgreSQL takes. */
const Instant = z.iso.datetime({ offset: true }).refine((value) => !value.startsWith('0000'), 'must be in year 0001 or later');

export const OrderListQuery = z
  .strictObject({
    status: z
      .string()
      .regex(wordsPattern([...STATUS_WORDS, 'active']), 'must be an order status (any case), an upper-case alias, or active')
      .optional()
      .meta({
        description: 'A status in any case, an upper-case alias, or `active` (confirmed, paid, shipped, delivered).',
        // No example on a filter: the docs page fills it in, and "Try it out" would list a
        // narrowed or empty page (docs/api.md#the-openapi-document).
        example: undefined,
        override: closedSetInAnyCase([...ORDER_STATUSES, ...UPPER_CASE_NAMES, 'active']),
      }),
    customer_id: Id.optional().meta({
      description: "Only this customer's orders (admins and service clients). A customer may name only themself: another customer's id is 403.",
      // No example: the docs page would fill it in, and a customer trying the list there would
      // name someone else and get 403.
      example: undefined,
    }),
    created_gte: Instant.optional().meta({ description: 'Only orders created at or after this instant (RFC 3339, such as `2026-01-01T00:00:00Z`).' }),
    created_lt: Instant.optional().meta({ description: 'Only orders created before this instant (RFC 3339, such as `2026-02-01T00:00:00Z`).' }),
    metadata: metadataFilter(
      'Only orders whose metadata holds every given key with the given value: `metadata[erp_id]=ERP-1042` (REST, deepObject style: one parameter a pair); an object on /trpc. Fast for a value few orders share (an id): the matches are read from an index, then sorted.',
    ),
    sort: SortInput.optional().meta({
      description: `The order of the list: ${ORDER_SORTS.join(', ')} (default -created_at; \`-\` is descending, the id breaks ties). Any other is 400 listing them. A cursor is good only with the sort that issued it.`,
    }),
    expand: Expand,
    ...PageQuery,
  })
  // No input at all is the first page of everything: `list()` needs no `{}`.
  .prefault({});
export type OrderListQuery = z.infer<typeof OrderListQuery>;

/** GET of one order: its id, and what to embed. */
export const OrderGetQuery = z.strictObject({ id: Id, expand: Expand });
export type OrderGetQuery = z.infer<typeof OrderGetQuery>;

export const OrderList = listOf(Order).meta({ id: 'OrderList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const draft: Order = {
  id: 17,
  customer_id: 7,
  items: [
    { product_id: 42, quantity: 2, unit_price: 1999, line_total: 3998 },
    { product_id: 43, quantity: 1, unit_price: 550, line_total: 550 },
  ],
  address: '1 Main St, Springfield',
  status: 'draft',
  discount_code: 'SPRING-10',
  currency: 'USD',
  total: 4548,
  metadata: { erp_id: 'ERP-1042' },
  created_at: '2026-01-31T12:00:00.000Z',
  updated_at: '2026-01-31T12:05:00.000Z',
  _links: {
    self: { href: '/api/v1/orders/17', method: 'GET' },
    confirm: { href: '/api/v1/orders/17/confirm', method: 'POST' },
    cancel: { href: '/api/v1/orders/17/cancel', method: 'POST' },
    notes: { href: '/api/v1/orders/17/notes', method: 'GET' },
  },
};
requestExample(OrderCreate, {
  items: [
    { product_id: 42, quantity: 2 },
    { product_id: 43, quantity: 1 },
  ],
  address: '1 Main St, Springfield',
  discount_code: 'SPRING-10',
  metadata: { erp_id: 'ERP-1042' },
});
requestExample(OrderReplace, {
  id: 17,
  customer_id: 7,
  items: [{ product_id: 42, quantity: 3 }],
  address: '2 Side St, Springfield',
  discount_code: null,
  currency: 'USD',
  status: 'draft',
});
responseExample(Order, draft);
responseExample(OrderList, pageExample([draft]));

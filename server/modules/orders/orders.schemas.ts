import { z } from 'zod';
import { Currency, Id, listOf, PageQuery, ReadOnly, text, Timestamp } from '../common.schemas.ts';
import { ORDER_STATUSES, normalizeStatus, type OrderStatus } from './orders.rules.ts';

export const OrderStatusValue = z.enum(ORDER_STATUSES).meta({ id: 'OrderStatus' });

/** `draft` -> `[dD][rR][aA][fF][tT]`: a case-insensitive word in a pattern every JSON Schema tool reads. */
const anyCase = (word: string): string =>
  [...word].map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`)).join('');
const wordsPattern = (words: readonly string[]): RegExp => new RegExp(`^(?:${words.map(anyCase).join('|')})$`);

/** What a status input may say: a status or the upper-case schema's alias (`created` = draft), in any case. */
const STATUS_WORDS: readonly string[] = [...ORDER_STATUSES, 'created'];
const STATUS_MESSAGE = `must be one of ${ORDER_STATUSES.join(', ')} (any case; CREATED = draft)`;

const statusInput = (pattern: RegExp, message: string, meta: { description: string; example: string }) =>
  z
    .string()
    .regex(pattern, message)
    .transform((value, ctx): OrderStatus => {
      const status = normalizeStatus(value);
      if (status === undefined) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return status;
    })
    .meta(meta);

/** Status input: any case, `CREATED` for draft; answered in lower case. */
export const StatusInput = statusInput(
  wordsPattern(STATUS_WORDS),
  STATUS_MESSAGE,
  { description: 'Order status, any case; upper-case aliases accepted (CREATED = draft).', example: 'confirmed' },
);

/** A new order is always a draft: the only status its body may name. */
const CreateStatusInput = statusInput(
  wordsPattern(STATUS_WORDS.filter((word) => normalizeStatus(word) === 'draft')),
  'must be draft (or omitted) when an order is created',
  { description: 'Only draft (the default; any case, or CREATED) is accepted.', example: 'draft' },
);

const Link = z.object({ href: z.string(), method: z.string() });

export const OrderItem = z.object({
  product_id: Id,
  quantity: z.int(),
  unit_price: z.int().meta({ description: "The product's price when the item was set (minor units)." }),
  line_total: z.int(),
});

export const Order = z
  .object({
    id: Id,
    customer_id: Id,
    items: z.array(OrderItem),
    address: z.string().nullable(),
    status: OrderStatusValue,
    discount_code: z.string().nullable(),
    currency: Currency,
    total: z.int().meta({ description: 'Sum of line_total, minor units.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    _links: z.record(z.string(), Link).meta({
      description:
        'self always; confirm and cancel while draft; cancel and pay (POST /payments) while confirmed; ' +
        'send-to-fulfillment while paid; fulfillments (GET) from paid on.',
    }),
  })
  .meta({ id: 'Order' });
export type Order = z.infer<typeof Order>;

/** The most lines an order may have (CONTRACT section 2 bounds quantities; this bounds the lines). */
export const MAX_ITEMS = 100;

const Quantity = z.int().min(1).max(10_000);
const Address = text(0, 500).nullable();
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
  })
  .meta({ id: 'OrderInput' });
export type OrderCreate = z.infer<typeof OrderCreate>;

/** An item as PUT and PATCH see it: the read-only fields of a read item may come back, ignored. */
const OrderItemReplace = z.strictObject({ product_id: Id, quantity: Quantity, unit_price: ReadOnly, line_total: ReadOnly });

/** The writable document of an order: what PUT sends and what a patch must produce. */
export const OrderDocument = z.strictObject({
  customer_id: Id.optional(),
  items: z.array(OrderItemReplace).max(MAX_ITEMS).optional(),
  address: Address.optional(),
  discount_code: DiscountCode.optional(),
  currency: Currency.optional(),
  status: StatusInput.optional(),
  id: ReadOnly,
  total: ReadOnly,
  created_at: ReadOnly,
  updated_at: ReadOnly,
  _links: ReadOnly,
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

export const PATCH_FORMATS = ['merge-patch', 'json-patch'] as const;

export const OrderPatch = z.object({
  id: Id,
  format: z.enum(PATCH_FORMATS).meta({ description: 'merge-patch (RFC 7396) or json-patch (RFC 6902).' }),
  document: z.unknown().meta({ description: 'The patch document.' }),
});
export type OrderPatch = z.infer<typeof OrderPatch>;

export const OrderListQuery = z.object({
  status: z
    .string()
    .regex(wordsPattern([...STATUS_WORDS, 'active']), 'must be an order status (any case), an upper-case alias, or active')
    .optional()
    .meta({ description: 'A status in any case, an upper-case alias, or `active` (confirmed, paid, shipped, delivered).' }),
  ...PageQuery,
});
export type OrderListQuery = z.infer<typeof OrderListQuery>;

export const OrderList = listOf(Order).meta({ id: 'OrderList' });

import { z } from 'zod';
import { Currency, Id, listOf, MAX_PRICE, MAX_STOCK, PageQuery, ReadOnly, text, Timestamp } from '../common.schemas.ts';

export const SORT_FIELDS = ['name', 'price', 'created_at', 'id'] as const;

export const Product = z
  .object({
    id: Id,
    sku: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    category: z.string(),
    price: z.int().meta({ description: 'Price in minor units (cents).' }),
    currency: Currency,
    stock: z.int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Product' });
export type Product = z.infer<typeof Product>;

const productFields = {
  sku: text(1, 64).meta({ description: 'Stock-keeping unit, unique.', example: 'TEE-RED-M' }),
  name: text(1, 200).meta({ example: 'Red T-shirt, M' }),
  description: text(0, 2000, { multiline: true }).nullable().optional(),
  category: text(1, 64).meta({ example: 'apparel' }),
  price: z
    .int()
    .min(0)
    .max(MAX_PRICE)
    .meta({ description: `Price in minor units (cents), 0-${MAX_PRICE}.`, example: 1999 }),
  currency: Currency.default('USD'),
  stock: z
    .int()
    .min(0)
    .max(MAX_STOCK)
    .default(0)
    .meta({ description: `Units available, 0-${MAX_STOCK}: bounded so that releasing reserved stock can never overflow.`, example: 100 }),
};

export const ProductInput = z.strictObject(productFields).meta({ id: 'ProductInput' });
export type ProductInput = z.infer<typeof ProductInput>;

/** PUT: the full representation; read-only fields may be sent back and are ignored. */
export const ProductReplace = z.strictObject({
  id: Id,
  ...productFields,
  created_at: ReadOnly,
  updated_at: ReadOnly,
});
export type ProductReplace = z.infer<typeof ProductReplace>;

const sortPattern = new RegExp(`^-?(${SORT_FIELDS.join('|')})(,-?(${SORT_FIELDS.join('|')}))*$`);

export const ProductListQuery = z.object({
  category: text(1, 64).optional().meta({ description: 'Exact category match.' }),
  sort: z
    .string()
    .regex(sortPattern, `must be a comma list of ${SORT_FIELDS.join(', ')}, each optionally prefixed with - for descending`)
    .optional()
    .meta({ description: 'Comma list of name, price, created_at, id; prefix - for descending.', example: '-price,name' }),
  ...PageQuery,
});
export type ProductListQuery = z.infer<typeof ProductListQuery>;

export const ProductList = listOf(Product).meta({ id: 'ProductList' });

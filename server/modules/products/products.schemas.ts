import { z } from 'zod';
import {
  Currency,
  Id,
  listOf,
  MAX_PRICE,
  MAX_STOCK,
  Metadata,
  PageQuery,
  patchInput,
  type MetadataMergePatch,
  pageExample,
  readOnly,
  requestExample,
  responseExample,
  text,
  Timestamp,
} from '../common.schemas.ts';

export const SORT_FIELDS = ['name', 'price', 'created_at', 'id'] as const;

const Price = z.int().min(0).max(MAX_PRICE);
const Stock = z.int().min(0).max(MAX_STOCK);

export const Product = z
  .object({
    id: Id,
    sku: z.string().min(1).max(64),
    name: z.string().min(1).max(200),
    description: z.string().max(2000).nullable(),
    category: z.string().min(1).max(64),
    price: Price.meta({ description: 'Price in minor units (cents).' }),
    currency: Currency,
    stock: Stock.meta({ description: 'Units available (reserved units of confirmed orders are taken out).' }),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Product' });
export type Product = z.infer<typeof Product>;

const productFields = {
  sku: text(1, 64).meta({ description: 'Stock-keeping unit, unique (a duplicate is 409).', example: 'TEE-RED-M' }),
  name: text(1, 200).meta({ example: 'Red T-shirt, M' }),
  description: text(0, 2000, { multiline: true }).nullable().optional(),
  category: text(1, 64).meta({ example: 'apparel' }),
  price: Price.meta({ description: `Price in minor units (cents), 0-${MAX_PRICE}.`, example: 1999 }),
  currency: Currency.default('USD'),
  stock: Stock.default(0).meta({
    description: `Units available, 0-${MAX_STOCK}: bounded so that releasing reserved stock can never overflow.`,
    example: 100,
  }),
  metadata: Metadata.optional(),
};

export const ProductInput = z.strictObject(productFields).meta({ id: 'ProductInput' });
export type ProductInput = z.infer<typeof ProductInput>;

/** PUT: the full representation; read-only fields may be sent back and are ignored. */
export const ProductReplace = z.strictObject({
  id: Id,
  ...productFields,
  created_at: readOnly(Timestamp),
  updated_at: readOnly(Timestamp),
});
export type ProductReplace = z.infer<typeof ProductReplace>;

/**
 * What a patch must leave (docs/api.md#writes): a PUT body, whose `id` is read-only (the path
 * names the product) and whose defaulted fields a patch may not remove (`currency: null` is 422).
 */
export const PatchedProductDocument = ProductReplace.extend({ id: readOnly(Id), currency: Currency, stock: Stock });

/** A merge patch (RFC 7396): members of the PUT body; a metadata key set to `null` is removed. */
export type ProductMergePatch = Partial<Omit<z.input<typeof ProductReplace>, 'metadata'>> & { metadata?: MetadataMergePatch };

export const ProductPatch = patchInput<ProductMergePatch>();
export type ProductPatch = z.infer<typeof ProductPatch>;

const sortPattern = new RegExp(`^-?(${SORT_FIELDS.join('|')})(,-?(${SORT_FIELDS.join('|')}))*$`);

/** The shortest search: a trigram index finds a substring by its three-character pieces (docs/api.md#product-search). */
export const MIN_SEARCH = 3;
const MAX_SEARCH = 100;

export const ProductListQuery = z
  .strictObject({
    q: text(MIN_SEARCH, MAX_SEARCH)
      .optional()
      .meta({
        description: `Search: products whose name, SKU or description contains this text, in any case (${MIN_SEARCH}-${MAX_SEARCH} characters; \`%\` and \`_\` are plain characters), such as \`shirt\`.`,
      }),
    // No examples on the filters: the docs page fills them in, and "Try it out" would list a
    // narrowed or empty page (docs/api.md#the-openapi-document).
    category: text(1, 64).optional().meta({ description: 'Exact category match, such as `apparel`.' }),
    price_gte: Price.optional().meta({ description: 'Price at least this (minor units).', example: undefined }),
    price_lte: Price.optional().meta({ description: 'Price at most this (minor units).', example: undefined }),
    in_stock: z.boolean().optional().meta({ description: '`true`: stock above 0; `false`: stock 0. Exactly `true` or `false` (400 otherwise).' }),
    sort: z
      .string()
      .regex(sortPattern, `must be a comma list of ${SORT_FIELDS.join(', ')}, each optionally prefixed with - for descending`)
      .optional()
      .meta({ description: 'Comma list of name, price, created_at, id; prefix - for descending. Default: id.', example: '-price,name' }),
    ...PageQuery,
  })
  // No input at all is the first page of everything: `list()` needs no `{}`.
  .prefault({});
export type ProductListQuery = z.infer<typeof ProductListQuery>;

export const ProductList = listOf(Product).meta({ id: 'ProductList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const tee = {
  sku: 'TEE-RED-M',
  name: 'Red T-shirt, M',
  description: 'Organic cotton.',
  category: 'apparel',
  price: 1999,
  currency: 'USD',
  stock: 25,
};
const teeRepresentation: Product = { id: 42, ...tee, metadata: {}, created_at: '2026-01-31T12:00:00.000Z', updated_at: '2026-02-01T08:30:00.000Z' };
requestExample(ProductInput, tee);
requestExample(ProductReplace, { id: 42, ...tee, price: 1799, stock: 40 });
responseExample(Product, teeRepresentation);
responseExample(ProductList, pageExample([teeRepresentation]));

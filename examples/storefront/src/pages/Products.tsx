/**
 * Browse and narrow the catalogue: by category (the filter products.list offers) and by sort
 * order, a page at a time (the list's cursor for "More products").
 */
import type { RouterInputs, RouterOutputs } from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';
import { addToCart, useCart } from '../cart.ts';
import { ErrorMessage, Loading, PageTitle } from '../components.tsx';
import { formatMoney } from '../money.ts';
import { client } from '../session.ts';

type Product = RouterOutputs['products']['list']['data'][number];
type ListQuery = NonNullable<RouterInputs['products']['list']>;

const SORTS = [
  { value: 'name', label: 'Name' },
  { value: 'price', label: 'Price: low to high' },
  { value: '-price', label: 'Price: high to low' },
  { value: '-created_at', label: 'Newest' },
] as const;
const PAGE_SIZE = 12;

export function Products() {
  const [category, setCategory] = useState('');
  const [sort, setSort] = useState<string>('name');
  const [categories, setCategories] = useState<string[]>([]);
  const [products, setProducts] = useState<Product[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [added, setAdded] = useState('');
  const cart = useCart();

  const query = (cursor?: string): ListQuery => ({ sort, limit: PAGE_SIZE, ...(category ? { category } : {}), ...(cursor === undefined ? {} : { cursor }) });

  // The categories on offer, from the catalogue's first 100 products (a small shop's whole range).
  useEffect(() => {
    client.products.list
      .query({ limit: 100, sort: 'name' })
      .then((page) => setCategories([...new Set(page.data.map((p) => p.category))].sort()))
      .catch(() => setCategories([]));
  }, []);

  useEffect(() => {
    let current = true;
    setProducts(undefined);
    setError(undefined);
    client.products.list
      .query(query())
      .then((page) => {
        if (!current) return;
        setProducts(page.data);
        setNext(page.next_cursor);
      })
      .catch((e: unknown) => current && setError(e));
    return () => {
      current = false;
    };
  }, [category, sort]);

  const more = async () => {
    if (next === null) return;
    try {
      const page = await client.products.list.query(query(next));
      setProducts((shown) => [...(shown ?? []), ...page.data]);
      setNext(page.next_cursor);
    } catch (e) {
      setError(e);
    }
  };

  const add = (product: Product) => {
    addToCart({ product_id: product.id, name: product.name, price: product.price, currency: product.currency, stock: product.stock });
    setAdded(`Added ${product.name} to your cart.`);
  };

  return (
    <>
      <PageTitle>Products</PageTitle>
      <form class="filters" role="search" aria-label="Products" onSubmit={(e) => e.preventDefault()}>
        <label>
          Category
          <select value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
            <option value="">All categories</option>
            {categories.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort by
          <select value={sort} onChange={(e) => setSort(e.currentTarget.value)}>
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p class="notice" role="status">
        {added}
      </p>
      <ErrorMessage error={error} />
      {products === undefined && error === undefined && <Loading what="products" />}
      {products?.length === 0 && <p>No products here yet.</p>}
      <ul class="products">
        {products?.map((product) => {
          const inCart = cart.find((line) => line.product_id === product.id)?.quantity ?? 0;
          return (
            <li key={product.id} class="product">
              <h2>{product.name}</h2>
              {product.description && <p>{product.description}</p>}
              <p class="price">{formatMoney(product.price, product.currency)}</p>
              <p class="stock">{product.stock > 0 ? `${product.stock} in stock` : 'Out of stock'}</p>
              {/* The visible words begin the accessible name (WCAG 2.5.3), which names the product. */}
              <button type="button" disabled={product.stock <= inCart} aria-label={`Add to cart: ${product.name}`} onClick={() => add(product)}>
                Add to cart
              </button>
              {inCart > 0 && <p class="in-cart">{inCart} in your cart</p>}
            </li>
          );
        })}
      </ul>
      {next !== null && (
        <button type="button" class="secondary" onClick={() => void more()}>
          More products
        </button>
      )}
    </>
  );
}

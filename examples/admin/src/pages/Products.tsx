/**
 * The catalogue: every product with price and stock, a form that adds one, and one page per
 * product to change it (a full replace) or archive it.
 */
import type { RouterInputs, RouterOutputs } from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, Link, Loading, Notice, PageTitle } from '../components.tsx';
import { formatMoney, inputStep, toMajorInput, toMinor } from '../money.ts';
import { navigate } from '../router.ts';
import { client } from '../session.ts';

type Product = RouterOutputs['products']['get'];
type ProductInput = RouterInputs['products']['create'];

export function Products() {
  const [products, setProducts] = useState<Product[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');

  const first = () =>
    client.products.list.query({ limit: 50 }).then((page) => {
      setProducts(page.data);
      setNext(page.next_cursor);
    });

  useEffect(() => {
    first().catch((e: unknown) => setError(e));
  }, []);

  const more = async () => {
    if (next === null) return;
    try {
      const page = await client.products.list.query({ limit: 50, cursor: next });
      setProducts((shown) => [...(shown ?? []), ...page.data]);
      setNext(page.next_cursor);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <PageTitle>Products</PageTitle>
      <ErrorMessage error={error} />
      <Notice text={notice} />
      {products === undefined && error === undefined && <Loading what="products" />}
      {products !== undefined && (
        <table class="lines">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">SKU</th>
              <th scope="col">Category</th>
              <th scope="col">Price</th>
              <th scope="col">Stock</th>
            </tr>
          </thead>
          <tbody>
            {products.map((p) => (
              <tr key={p.id}>
                <th scope="row">
                  <Link href={`/products/${p.id}`}>{p.name}</Link>
                </th>
                <td>{p.sku}</td>
                <td>{p.category}</td>
                <td>{formatMoney(p.price, p.currency)}</td>
                <td>{p.stock}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null && (
        <button type="button" class="secondary" onClick={() => void more()}>
          More products
        </button>
      )}
      <section aria-labelledby="new-product">
        <h2 id="new-product">Add a product</h2>
        <ProductForm
          submitLabel="Add product"
          onSubmit={async (input) => {
            const created = await client.products.create.mutate(input);
            await first();
            setNotice(`Added ${created.name}.`);
          }}
        />
      </section>
    </>
  );
}

export function ProductPage({ id }: { id: number }) {
  const [product, setProduct] = useState<Product | undefined>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');

  useEffect(() => {
    client.products.get
      .query({ id })
      .then(setProduct)
      .catch((e: unknown) => setError(e));
  }, [id]);

  if (product === undefined) {
    return (
      <>
        <PageTitle>Product #{id}</PageTitle>
        {error === undefined ? <Loading what="the product" /> : <ErrorMessage error={error} />}
        <p>
          <Link href="/products">All products</Link>
        </p>
      </>
    );
  }

  const archive = async () => {
    if (!confirm(`Archive ${product.name}? It leaves the catalogue; orders keep it.`)) return;
    try {
      await client.products.delete.mutate({ id });
      navigate('/products');
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <PageTitle>{product.name}</PageTitle>
      <ErrorMessage error={error} />
      <Notice text={notice} />
      <ProductForm
        initial={product}
        submitLabel="Save"
        onSubmit={async (input) => {
          // A PUT replaces the whole product: send its metadata back, or an integration's keys would go.
          setProduct(await client.products.replace.mutate({ id, ...input, metadata: product.metadata }));
          setNotice('Saved.');
        }}
      />
      <p>
        <button type="button" class="danger" onClick={() => void archive()}>
          Archive
        </button>
      </p>
      <p>
        <Link href="/products">All products</Link>
      </p>
    </>
  );
}

function ProductForm({ initial, submitLabel, onSubmit }: { initial?: Product; submitLabel: string; onSubmit: (input: ProductInput) => Promise<void> }) {
  const [sku, setSku] = useState(initial?.sku ?? '');
  const [name, setName] = useState(initial?.name ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [category, setCategory] = useState(initial?.category ?? '');
  const currency = initial?.currency ?? 'USD';
  // Typed in the currency's major unit ("45.00"), as the page shows prices; sent in minor units.
  const [price, setPrice] = useState(initial === undefined ? '' : toMajorInput(initial.price, currency));
  const [priceError, setPriceError] = useState('');
  const [stock, setStock] = useState(String(initial?.stock ?? 0));
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="stacked-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        const minor = toMinor(price, currency);
        if (minor === undefined) {
          setPriceError(`Enter a price in ${currency} such as 12.50.`);
          return;
        }
        setPriceError('');
        setBusy(true);
        setError(undefined);
        onSubmit({ sku, name, description: description === '' ? null : description, category, price: minor, stock: Number(stock), currency })
          .catch((e: unknown) => setError(e))
          .finally(() => setBusy(false));
      }}
    >
      <ErrorMessage error={error} />
      <label>
        SKU
        <input value={sku} required maxLength={64} onInput={(e) => setSku(e.currentTarget.value)} />
      </label>
      <label>
        Name
        <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <textarea value={description} maxLength={2000} rows={3} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Category
        <input value={category} required maxLength={64} onInput={(e) => setCategory(e.currentTarget.value)} />
      </label>
      <label>
        Price ({currency})
        <input
          type="number"
          min={0}
          step={inputStep(currency)}
          required
          value={price}
          onInput={(e) => setPrice(e.currentTarget.value)}
          {...(priceError === '' ? {} : { 'aria-invalid': true, 'aria-describedby': 'price-error' })}
        />
      </label>
      {priceError !== '' && (
        <p class="field-error" id="price-error">
          {priceError}
        </p>
      )}
      <label>
        Stock
        <input type="number" min={0} step={1} required value={stock} onInput={(e) => setStock(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

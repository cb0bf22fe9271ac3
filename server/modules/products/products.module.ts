/** The products module (docs/api.md#products): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { productsRouter } from './products.router.ts';
import { products } from './products.table.ts';

export const productsModule = defineModule({ name: 'products', router: productsRouter, tables: [products] });

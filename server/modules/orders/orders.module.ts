/** The orders module (docs/api.md#orders): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { ordersRouter } from './orders.router.ts';
import { orderItems, orders } from './orders.table.ts';

export const ordersModule = defineModule({ name: 'orders', router: ordersRouter, tables: [orders, orderItems] });

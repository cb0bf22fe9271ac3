/** The fulfillments module (docs/api.md#fulfillments): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { fulfillmentsRouter } from './fulfillments.router.ts';
import { fulfillments } from './fulfillments.table.ts';

export const fulfillmentsModule = defineModule({ name: 'fulfillments', router: fulfillmentsRouter, tables: [fulfillments] });

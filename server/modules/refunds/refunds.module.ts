/** The refunds module (docs/api.md#refunds): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { refundsRouter } from './refunds.router.ts';
import { refunds } from './refunds.table.ts';

export const refundsModule = defineModule({ name: 'refunds', router: refundsRouter, tables: [refunds] });

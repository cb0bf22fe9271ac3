/** The payments module (docs/api.md#payments): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { paymentsRouter } from './payments.router.ts';
import { payments } from './payments.table.ts';

export const paymentsModule = defineModule({ name: 'payments', router: paymentsRouter, tables: [payments] });

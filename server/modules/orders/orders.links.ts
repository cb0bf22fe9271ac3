/**
 * The links other modules add to an order's `_links` (order notes add `notes`), declared where
 * those modules live (`orderLinks.declare(...)` beside their procedures) and collected here: the
 * representation adds them (orders.representation.ts) and the `OrderLinks` schema documents them
 * (orders.schemas.ts). The order's own links (its moves) are its representation's.
 */
import type { orders } from './orders.table.ts';
import { DeclaredLinks } from '../../lib/declared-links.ts';

export const orderLinks = new DeclaredLinks<typeof orders.$inferSelect>('order', ['self', 'confirm', 'cancel', 'pay', 'send-to-fulfillment', 'fulfillments']);

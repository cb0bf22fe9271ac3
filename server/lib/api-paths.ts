/**
 * Canonical base of every resource path. Here, below the modules, so an order's `_links` and the
 * REST facade's `Location` headers share it without `modules/` importing `http/`.
 */
export const API_PREFIX = '/api/v1';

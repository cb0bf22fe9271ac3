/** Canonical base of every resource path; `Location` headers and `_links` use it. */
export const API_PREFIX = '/api/v1';

/**
 * A `fetch` of the platform's shape: the global one, or any function typed `typeof fetch`, passed
 * as it is (no cast, also under `exactOptionalPropertyTypes`).
 */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

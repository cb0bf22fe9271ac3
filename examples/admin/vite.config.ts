import { defineConfig } from 'vite';

// Preact's automatic JSX runtime; the service's URL and the app's OAuth client come from the
// environment (VITE_ORDER_SERVICE_URL, VITE_CLIENT_ID: see README.md), read at build time.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { target: 'es2022', sourcemap: false },
});

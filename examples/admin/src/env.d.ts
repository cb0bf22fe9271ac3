/** What the build reads from the environment (see ../README.md). */
interface ImportMetaEnv {
  /** The service's base URL, which is its OAuth issuer, e.g. https://orders.example.com. */
  readonly VITE_ORDER_SERVICE_URL?: string;
  /** This app's OAuth client: a public client with PKCE, its redirect URI `<origin>/callback`. */
  readonly VITE_CLIENT_ID?: string;
}

-- Custom SQL migration file, put your code below! --
-- Trigram matching for product search (docs/api.md#product-search): PostgreSQL's contrib
-- extension, trusted (a database owner may create it); PGlite loads its own build where it is
-- created (server/db/client.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- UNLOGGED by hand (drizzle-kit does not model it): counters need no WAL write per request, and a
-- crash that empties the table only starts every caller's window afresh.
CREATE UNLOGGED TABLE "rate_limit_counters" (
	"key" text PRIMARY KEY NOT NULL,
	"hits" integer NOT NULL,
	"resets_at" timestamp (3) with time zone NOT NULL
);

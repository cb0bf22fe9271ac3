ALTER TABLE "orders" ADD COLUMN "total" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- An order made before the column existed: the sum of its lines, as its representation says.
UPDATE "orders" SET "total" = "lines"."total" FROM (SELECT "order_id", sum("unit_price"::bigint * "quantity") AS "total" FROM "order_items" GROUP BY "order_id") AS "lines" WHERE "lines"."order_id" = "orders"."id";--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "orders_updated_idx" ON "orders" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "orders_customer_updated_idx" ON "orders" USING btree ("customer_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "orders_total_idx" ON "orders" USING btree ("total","id");--> statement-breakpoint
CREATE INDEX "orders_customer_total_idx" ON "orders" USING btree ("customer_id","total","id");--> statement-breakpoint
CREATE INDEX "orders_metadata_idx" ON "orders" USING gin ("metadata" jsonb_path_ops);
DROP INDEX "orders_customer_idx";--> statement-breakpoint
DROP INDEX "orders_created_idx";--> statement-breakpoint
CREATE INDEX "orders_status_created_idx" ON "orders" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "orders_active_created_idx" ON "orders" USING btree ("created_at","id") WHERE "orders"."status" in ('confirmed', 'paid', 'shipped', 'delivered');--> statement-breakpoint
CREATE INDEX "orders_customer_created_idx" ON "orders" USING btree ("customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "orders_customer_status_created_idx" ON "orders" USING btree ("customer_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "orders_customer_active_created_idx" ON "orders" USING btree ("customer_id","created_at","id") WHERE "orders"."status" in ('confirmed', 'paid', 'shipped', 'delivered');--> statement-breakpoint
CREATE INDEX "orders_created_idx" ON "orders" USING btree ("created_at","id");
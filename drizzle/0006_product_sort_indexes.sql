CREATE INDEX "products_name_idx" ON "products" USING btree ("name","id") WHERE "products"."archived_at" is null;--> statement-breakpoint
CREATE INDEX "products_name_desc_idx" ON "products" USING btree ("name" DESC NULLS FIRST,"id") WHERE "products"."archived_at" is null;--> statement-breakpoint
CREATE INDEX "products_price_idx" ON "products" USING btree ("price","id") WHERE "products"."archived_at" is null;--> statement-breakpoint
CREATE INDEX "products_price_desc_idx" ON "products" USING btree ("price" DESC NULLS FIRST,"id") WHERE "products"."archived_at" is null;--> statement-breakpoint
CREATE INDEX "products_created_idx" ON "products" USING btree ("created_at","id") WHERE "products"."archived_at" is null;--> statement-breakpoint
CREATE INDEX "products_created_desc_idx" ON "products" USING btree ("created_at" DESC NULLS FIRST,"id") WHERE "products"."archived_at" is null;
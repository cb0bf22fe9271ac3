CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"type" text NOT NULL,
	"order_id" integer,
	"api_version" text DEFAULT 'v1' NOT NULL,
	"data" json NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at","seq");--> statement-breakpoint
CREATE INDEX "events_type_created_idx" ON "events" USING btree ("type","created_at","seq");--> statement-breakpoint
CREATE INDEX "events_order_created_idx" ON "events" USING btree ("order_id","created_at","seq") WHERE "events"."order_id" is not null;
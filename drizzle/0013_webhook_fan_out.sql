-- Webhook fan-out (docs/webhooks.md#delivery): every event row makes one delivery per enabled
-- endpoint whose enabled_events name its type, its `<resource>.*` prefix or `*`, in the event's
-- own transaction. So an event is fanned out exactly once, with its change or not at all, and
-- no module that records events has to know about webhooks.
CREATE FUNCTION "webhook_fan_out"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "webhook_deliveries" ("endpoint_id", "event_id", "event_type")
  SELECT e."id", NEW."id", NEW."type"
  FROM "webhook_endpoints" e
  WHERE NOT e."disabled"
    AND e."enabled_events" && ARRAY['*', NEW."type", split_part(NEW."type", '.', 1) || '.*'];
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "events_webhook_fan_out" AFTER INSERT ON "events" FOR EACH ROW EXECUTE FUNCTION "webhook_fan_out"();

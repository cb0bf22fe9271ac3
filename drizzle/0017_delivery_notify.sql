-- The fan-out tells the delivery workers when an event made a delivery (docs/webhooks.md#delivery):
-- a NOTIFY on the channel of server/modules/webhooks/webhooks.signal.ts (DELIVERIES_CHANNEL), sent
-- at the commit (PostgreSQL folds a transaction's identical notifications into one). An event no
-- endpoint takes notifies no worker, so a deployment without endpoints runs no round for its events.
CREATE OR REPLACE FUNCTION "webhook_fan_out"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "webhook_deliveries" ("endpoint_id", "event_id", "event_type")
  SELECT e."id", NEW."id", NEW."type"
  FROM "webhook_endpoints" e
  WHERE NOT e."disabled"
    AND e."enabled_events" && ARRAY['*', NEW."type", split_part(NEW."type", '.', 1) || '.*'];
  IF FOUND THEN
    PERFORM pg_notify('order_service_deliveries', '');
  END IF;
  RETURN NULL;
END
$$;

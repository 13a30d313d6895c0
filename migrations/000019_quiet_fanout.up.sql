-- The fan-out no longer NOTIFYs. A transaction that has issued NOTIFY takes one database-wide
-- lock at commit and holds it through its WAL flush, so every send and every status report
-- (each writes an event) committed one after another: in the lifecycle benchmark nearly every
-- waiting backend waited on that lock. The process that writes an event wakes its own
-- dispatcher instead (store.WakeOnEvents), the other replicas find the delivery on their poll
-- tick, and the rare writers elsewhere (a redelivery) still NOTIFY webhook_deliveries.
CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT NEW.account_id, NEW.id, w.id, NEW.created_at
    FROM webhook_endpoints w
    WHERE w.account_id = NEW.account_id AND w.enabled;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT NEW.account_id, NEW.id, w.id, NEW.created_at
    FROM webhook_endpoints w
    WHERE w.account_id = NEW.account_id AND w.enabled;
    IF FOUND THEN
        PERFORM pg_notify('webhook_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;

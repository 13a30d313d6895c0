-- A send is never made twice (issue 8, item 1).
--
-- outcome_unknown: the platform call of a pending message may have happened but its answer was
-- lost (timeout, unreadable answer, recording failed, process died). The message stays pending
-- until a status report adopts it through biz_opaque_callback_data; the API shows it as sent
-- with outcome_unknown: true, never as failed.
ALTER TABLE messages ADD COLUMN outcome_unknown boolean NOT NULL DEFAULT false;
CREATE INDEX messages_pending_idx ON messages (created_at) WHERE status = 'pending';

-- message_id: the message a live send created under this key, set in the statement that
-- created it. A key bound to a message is never released nor taken over: a retry gets the
-- message's recorded outcome or a 409 while it is being confirmed.
ALTER TABLE idempotency_keys ADD COLUMN message_id bigint;

-- callback_message_id: our message id echoed in biz_opaque_callback_data, kept with a parked
-- report so the reconciler can adopt the wamid later.
ALTER TABLE parked_statuses ADD COLUMN callback_message_id bigint;

-- status_at: the time of the event that set the template's status (a status webhook's
-- entry.time, or the sync that read it), so a late event never undoes a newer one: a late
-- APPROVED after a PAUSED does not make the template sendable again.
ALTER TABLE templates ADD COLUMN status_at timestamptz;

-- A number connected, moved or disconnected is announced on the connections_changed channel
-- (payload: the phone number id), so every replica drops its phone-number-id → account cache
-- entry at once (store.ListenConnections), whichever process made the change.
CREATE FUNCTION notify_connection_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('connections_changed', OLD.phone_number_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('connections_changed', NEW.phone_number_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER connections_notify AFTER INSERT OR UPDATE OR DELETE ON connections
    FOR EACH ROW EXECUTE FUNCTION notify_connection_change();

-- The claim reads due deliveries endpoint by endpoint (store.claimSQL), so that one endpoint's
-- large due backlog does not slow claims for the others. The global due index goes: with it
-- the planner walked one endpoint's whole backlog to find the others' due rows.
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
DROP INDEX webhook_deliveries_due_idx;

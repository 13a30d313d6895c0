-- Broadcasts reach the API: test-mode broadcasts kept apart from live ones, the pre-flight's
-- counts kept with the broadcast, the events of a broadcast that pauses or completes, and an
-- index for the recipients whose answer was lost.
ALTER TABLE broadcasts ADD COLUMN test boolean NOT NULL DEFAULT false;
-- What the pre-flight counted when the broadcast was created (duplicates, opted out,
-- marketing to US numbers, ...): the recipients it left out are not stored.
ALTER TABLE broadcasts ADD COLUMN preflight jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(preflight) = 'object');
DROP INDEX broadcasts_account_idx;
CREATE INDEX broadcasts_account_idx ON broadcasts (account_id, test, id DESC);

CREATE INDEX broadcast_recipients_unknown_idx ON broadcast_recipients (account_id, id) WHERE state = 'unknown';

-- New event types (opt-in for webhook endpoints).
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type = ANY (ARRAY['message.received', 'message.sent',
    'message.status', 'contact.created', 'webhook.test', 'message.received_without_number', 'message.edited',
    'message.deleted', 'contact.created_without_number', 'contact.updated', 'broadcast.paused', 'broadcast.completed']));

-- A broadcast that pauses (for any reason, or with a new reason) or completes writes its event
-- in the statement that changed it, whoever the writer is (the API, the engine's budget pause,
-- a paused template, the completion sweep).
CREATE FUNCTION broadcasts_state_event() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    IF NEW.state = 'paused' THEN
        INSERT INTO events (account_id, type, test, data)
        VALUES (NEW.account_id, 'broadcast.paused', NEW.test, jsonb_build_object('broadcast_id', NEW.id, 'name', NEW.name,
            'campaign_id', NEW.campaign_id, 'reason', NEW.pause_reason,
            'resume_at', to_char(NEW.resume_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
    ELSE
        INSERT INTO events (account_id, type, test, data)
        SELECT NEW.account_id, 'broadcast.completed', NEW.test, jsonb_build_object('broadcast_id', NEW.id, 'name', NEW.name,
            'campaign_id', NEW.campaign_id, 'counts', coalesce(jsonb_object_agg(c.state, c.n), '{}'))
        FROM (SELECT state, count(*) AS n FROM broadcast_recipients
              WHERE account_id = NEW.account_id AND broadcast_id = NEW.id GROUP BY state) c;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER broadcasts_state_events AFTER UPDATE OF state, pause_reason ON broadcasts FOR EACH ROW
    WHEN ((NEW.state = 'completed' AND OLD.state <> 'completed')
        OR (NEW.state = 'paused' AND (OLD.state <> 'paused' OR OLD.pause_reason <> NEW.pause_reason)))
    EXECUTE FUNCTION broadcasts_state_event();

-- A broadcast's message that fails after the platform accepted it (a failed status report:
-- 131049, the per-user marketing limit, comes this way) fails its recipient too, whoever
-- applied the report; after 131049 the person is not tried again for 24 hours.
CREATE FUNCTION broadcast_message_failed() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    UPDATE broadcast_recipients SET state = 'failed', error_code = NEW.error_code, error_title = coalesce(NEW.error_title, ''),
        retry_not_before = CASE WHEN NEW.error_code = 131049 THEN coalesce(NEW.failed_at, now()) + interval '24 hours' END
    WHERE account_id = NEW.account_id AND message_id = NEW.platform_message_id AND state = 'sent';
    RETURN NULL;
END
$$;
CREATE TRIGGER messages_broadcast_failed AFTER UPDATE OF status ON messages FOR EACH ROW
    WHEN (NEW.status = 'failed' AND OLD.status <> 'failed' AND NEW.platform_message_id IS NOT NULL)
    EXECUTE FUNCTION broadcast_message_failed();

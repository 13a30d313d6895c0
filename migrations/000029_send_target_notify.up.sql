-- Live sends read the account's connected number and the templates they name from a cache
-- (store/sendtargets.go) that every change must reach: a change of an account's templates or of
-- its connection is announced on the send_targets_changed channel with the account id, so
-- every replica drops that account's cached targets at once (store.ListenConnections),
-- whichever process made the change. PostgreSQL sends one notification per account and
-- transaction however many rows change.
CREATE FUNCTION notify_send_target_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('send_targets_changed', OLD.account_id::text);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('send_targets_changed', NEW.account_id::text);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER templates_send_target_notify AFTER INSERT OR UPDATE OR DELETE ON templates
    FOR EACH ROW EXECUTE FUNCTION notify_send_target_change();
CREATE TRIGGER connections_send_target_notify AFTER INSERT OR UPDATE OR DELETE ON connections
    FOR EACH ROW EXECUTE FUNCTION notify_send_target_change();

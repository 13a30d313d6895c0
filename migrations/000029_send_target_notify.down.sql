DROP TRIGGER IF EXISTS connections_send_target_notify ON connections;
DROP TRIGGER IF EXISTS templates_send_target_notify ON templates;
DROP FUNCTION IF EXISTS notify_send_target_change();

DROP TRIGGER IF EXISTS events_fan_out ON events;
DROP FUNCTION IF EXISTS events_fan_out();
DROP TABLE IF EXISTS webhook_attempts;
DROP TABLE IF EXISTS webhook_deliveries;
DROP TABLE IF EXISTS webhook_endpoints;
DROP TABLE IF EXISTS events;

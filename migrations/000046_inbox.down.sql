DROP TRIGGER IF EXISTS memberships_unassign ON memberships;
DROP FUNCTION IF EXISTS memberships_unassign();
DROP TABLE IF EXISTS conversation_notes;
DROP INDEX IF EXISTS conversations_assigned_idx;
DROP INDEX IF EXISTS conversations_unread_idx;
DROP INDEX IF EXISTS conversations_changes_idx;
DROP INDEX IF EXISTS conversations_inbox_resolved_idx;
DROP INDEX IF EXISTS conversations_inbox_unassigned_idx;
DROP INDEX IF EXISTS conversations_inbox_assignee_idx;
DROP INDEX IF EXISTS conversations_inbox_open_idx;
ALTER TABLE conversations
    DROP COLUMN IF EXISTS change_xid,
    DROP COLUMN IF EXISTS resolved_at,
    DROP COLUMN IF EXISTS assigned_user_id,
    DROP COLUMN IF EXISTS last_read_message_id,
    DROP COLUMN IF EXISTS unread_count,
    DROP COLUMN IF EXISTS last_activity_at;

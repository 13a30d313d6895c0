-- The team inbox: each conversation's state for the dashboard's inbox, and its internal notes.
--
-- last_activity_at orders the inbox: set by each customer message (store/inbound.go), each
-- answer (POST /v1/messages or the panel's answer) and each team action (store/inbox_actions.go);
-- template sends and broadcasts leave it alone. It stays NULL until the customer writes, and a
-- conversation without a customer message is not in the inbox. unread_count counts customer
-- messages after last_read_message_id (the latest read by any teammate). A customer message
-- clears resolved_at: it reopens the conversation. assigned_user_id is a member of the account
-- (AssignConversation checks it, locking the membership); removing the member leaves the
-- conversation unassigned (memberships_unassign). It is no foreign key: a foreign key's check
-- would run at every conversation insert, and template sends and broadcasts insert them.
--
-- change_xid is the transaction that last changed what an inbox row shows (a customer message,
-- an answer, an assignment, a resolve or reopen, a note, a read): the live change feed
-- (store/inbox_changes.go) reads the conversations whose change_xid is at or after the oldest
-- transaction still running at the previous poll, so a change committed late is never missed.
ALTER TABLE conversations
    ADD COLUMN last_activity_at timestamptz,
    ADD COLUMN unread_count integer NOT NULL DEFAULT 0,
    ADD COLUMN last_read_message_id bigint,
    ADD COLUMN assigned_user_id bigint,
    ADD COLUMN resolved_at timestamptz,
    ADD COLUMN change_xid xid8 NOT NULL DEFAULT '0';

UPDATE conversations SET last_activity_at = last_inbound_at WHERE last_inbound_at IS NOT NULL;

-- The views by latest activity, each with keyset paging on (last_activity_at, id): open
-- conversations (All, and Window open, which filters the window on the rows it reads), by
-- assignee (Mine), unassigned ones (their own index: read through the open one, a page of them
-- skipped every recent assigned conversation first), and resolved ones.
CREATE INDEX conversations_inbox_open_idx ON conversations (account_id, last_activity_at DESC, id DESC)
    WHERE last_activity_at IS NOT NULL AND resolved_at IS NULL;
CREATE INDEX conversations_inbox_assignee_idx ON conversations (account_id, assigned_user_id, last_activity_at DESC, id DESC)
    WHERE last_activity_at IS NOT NULL AND resolved_at IS NULL;
CREATE INDEX conversations_inbox_unassigned_idx ON conversations (account_id, last_activity_at DESC, id DESC)
    WHERE last_activity_at IS NOT NULL AND resolved_at IS NULL AND assigned_user_id IS NULL;
CREATE INDEX conversations_inbox_resolved_idx ON conversations (account_id, last_activity_at DESC, id DESC)
    WHERE last_activity_at IS NOT NULL AND resolved_at IS NOT NULL;
-- The navigation's unread badge.
CREATE INDEX conversations_unread_idx ON conversations (account_id)
    WHERE last_activity_at IS NOT NULL AND resolved_at IS NULL AND unread_count > 0;
-- The change feed's read, and memberships_unassign's.
CREATE INDEX conversations_changes_idx ON conversations (account_id, change_xid);
CREATE INDEX conversations_assigned_idx ON conversations (account_id, assigned_user_id) WHERE assigned_user_id IS NOT NULL;

CREATE TABLE conversation_notes (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    conversation_id bigint NOT NULL,
    user_id bigint REFERENCES users (id) ON DELETE SET NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (account_id, conversation_id) REFERENCES conversations (account_id, id) ON DELETE CASCADE
);
CREATE INDEX conversation_notes_conversation_idx ON conversation_notes (account_id, conversation_id, id DESC);

-- A removed member's conversations become unassigned, changed for the live feed.
CREATE FUNCTION memberships_unassign() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    UPDATE conversations SET assigned_user_id = NULL, change_xid = pg_current_xact_id()
    WHERE account_id = OLD.account_id AND assigned_user_id = OLD.user_id;
    RETURN NULL;
END $$;
CREATE TRIGGER memberships_unassign AFTER DELETE ON memberships FOR EACH ROW EXECUTE FUNCTION memberships_unassign();

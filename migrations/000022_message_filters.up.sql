-- Message listings filtered by status (issue 11; numbered after the newest migration, 000021:
-- it needs 000017's columns, and a database already past its number would never apply it),
-- without an index that names status or the delivered and read times: those would make every
-- delivered and read report a non-HOT update writing into every index of messages (000017 made
-- them heap-only; status as a key column of the listing indexes would multiply the WAL of each
-- delivered and read report). Only the filters whose rows never take a HOT
-- update get an index here; a filter by sent, delivered or read walks a newest-first index
-- and skips the other rows.
--
-- Pending, as the dashboard lists it: outbound, neither sent nor failed (the listing adds that
-- condition). The known-outcome ones are messages_pending_idx's (transient, found across all
-- accounts and filtered); those of unknown outcome can stay pending a long time and get their
-- own per-account index. Without these the filter was a scan of all the account's messages,
-- growing with the account. An entry is written only when a send's outcome becomes unknown.
CREATE INDEX messages_pending_unknown_idx ON messages (account_id, created_at DESC, id DESC)
    WHERE direction = 'out' AND sent_at IS NULL AND failed_at IS NULL AND outcome_unknown;

-- Failed within a campaign: a small campaign's failed messages were found by reading the
-- campaign's rows and discarding the others (most of them for a page of a small campaign,
-- from disk). An entry is written only when a message fails (an update that was never HOT:
-- failed_at is in messages_failed_idx's predicate).
CREATE INDEX messages_failed_campaign_idx ON messages (account_id, campaign_id, created_at DESC, id DESC)
    WHERE failed_at IS NOT NULL;

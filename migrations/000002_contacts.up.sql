-- Contacts: one per (account, mobile). Search by name or mobile uses trigram GIN indexes that
-- lead with account_id (btree_gin), so a search never scans another tenant's rows.
CREATE TABLE contacts (
    id         bigserial PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id),
    mobile     text        NOT NULL CHECK (mobile ~ '^[0-9]{8,15}$'),
    name       text        NOT NULL DEFAULT '',
    note       text        NOT NULL DEFAULT '' CHECK (length(note) <= 500),
    blocked    boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, mobile),
    UNIQUE (account_id, id)
);
CREATE INDEX contacts_newest_idx ON contacts (account_id, created_at DESC, id DESC);
CREATE INDEX contacts_name_trgm_idx ON contacts USING gin (account_id, lower(name) gin_trgm_ops);
CREATE INDEX contacts_mobile_trgm_idx ON contacts USING gin (account_id, mobile gin_trgm_ops);

-- Other forms of a contact's number (the platform's wa_id when it differs from the mobile).
CREATE TABLE contact_aliases (
    account_id bigint NOT NULL,
    alias      text   NOT NULL,
    contact_id bigint NOT NULL,
    PRIMARY KEY (account_id, alias),
    FOREIGN KEY (account_id, contact_id) REFERENCES contacts (account_id, id) ON DELETE CASCADE
);

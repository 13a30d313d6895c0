-- The workspace's recent refused API calls (4xx and 5xx answers to an authenticated key), for
-- the dashboard's "API errors" page. Only the method, the path (never the query, which may hold
-- a key), the status, the error code and the key's id are kept; store.RecordAPIError keeps at
-- most the newest 1,000 rows of the last 7 days per workspace.
CREATE TABLE api_errors (
    id          bigserial   PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key_id      bigint,
    method      text        NOT NULL,
    path        text        NOT NULL,
    status      int         NOT NULL,
    code        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_errors_account_idx ON api_errors (account_id, id DESC);

-- A staged contact import's rejected rows, each with its line and reason, kept with the import
-- so that the preview pages through them and offers them as a CSV; discarding or confirming
-- the import does not change them, deleting the import deletes them.
CREATE TABLE contact_import_rejections (
    account_id bigint NOT NULL,
    import_id bigint NOT NULL,
    line int NOT NULL,
    reason text NOT NULL,
    detail text NOT NULL DEFAULT '',
    PRIMARY KEY (import_id, line),
    FOREIGN KEY (account_id, import_id) REFERENCES contact_imports (account_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_import_rejections_account_idx ON contact_import_rejections (account_id, import_id, line);

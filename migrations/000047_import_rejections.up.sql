-- A staged contact import's rejected rows, each with its line and reason, kept with the import
-- so that the preview pages through them and offers them as a CSV; discarding or confirming
-- the import does not change them, deleting the import deletes them. The primary key starts
-- with the account: it serves the account's paged reads and the cascade from contact_imports,
-- so no other index is kept (an import may reject a million rows).
CREATE TABLE contact_import_rejections (
    account_id bigint NOT NULL,
    import_id bigint NOT NULL,
    line int NOT NULL,
    reason text NOT NULL,
    detail text NOT NULL DEFAULT '',
    PRIMARY KEY (account_id, import_id, line),
    FOREIGN KEY (account_id, import_id) REFERENCES contact_imports (account_id, id) ON DELETE CASCADE
);

DROP TABLE IF EXISTS contact_import_rows;
DROP TABLE IF EXISTS contact_imports;
DROP TABLE IF EXISTS audiences;
DROP TABLE IF EXISTS contact_tags;
DROP TABLE IF EXISTS portfolio_reach;
DROP TABLE IF EXISTS broadcast_recipients;
DROP TABLE IF EXISTS broadcasts;

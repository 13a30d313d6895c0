DROP TABLE IF EXISTS contact_import_rejections;

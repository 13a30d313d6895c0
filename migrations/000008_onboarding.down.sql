DROP TABLE IF EXISTS sandbox_messages;
DROP TABLE IF EXISTS number_pins;
ALTER TABLE connections
    DROP COLUMN IF EXISTS details_for,
    DROP COLUMN IF EXISTS messaging_limit,
    DROP COLUMN IF EXISTS quality_rating;

-- Postgres only (postgres/000016_location_prefix_index.up.sql): SQLite
-- compares text bytewise, so its index on (warehouse_id, location) already
-- serves the overlap check's prefix range.
SELECT 1;

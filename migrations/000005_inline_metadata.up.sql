-- Postgres keeps catalog_objects rows of up to 8 KB inline
-- (postgres/000005_inline_metadata.up.sql replaces this file there).
-- SQLite has no TOAST: nothing to do.
SELECT 1;

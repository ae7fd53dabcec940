-- The overlap check (store/sqlstore/overlap.go) finds the locations inside
-- a new one as a byte range, compared COLLATE "C" whatever the database's
-- collation; this index serves that range. It is built inside the
-- migration's transaction (not CONCURRENTLY), which holds writes to
-- catalog_objects while it reads the location of every table and view
-- once.
CREATE INDEX catalog_objects_location_c ON catalog_objects (warehouse_id, (location COLLATE "C"));

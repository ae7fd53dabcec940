-- A warehouse's storage profile: how the catalog mints credentials for it.
-- JSON; secrets inside are sealed with the server's key, never stored plain.
ALTER TABLE warehouses ADD COLUMN storage_profile TEXT NOT NULL DEFAULT '';

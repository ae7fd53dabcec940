ALTER TABLE warehouses DROP COLUMN storage_profile;

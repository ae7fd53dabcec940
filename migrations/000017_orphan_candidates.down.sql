ALTER TABLE catalog_objects DROP COLUMN orphan_hold;
DROP TABLE orphan_candidates;

DROP TABLE idempotency_keys;
DROP TABLE catalog_objects;
DROP TABLE namespaces;
DROP TABLE warehouses;

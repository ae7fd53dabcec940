-- The index of a namespace's children led with warehouse_id, as does the
-- unique (warehouse_id, name_key) that finds one namespace by name. With
-- no statistics (a fresh Postgres database) the planner took either for
-- that lookup, and the children index binds only warehouse_id: a walk
-- over every namespace of the warehouse. Led by parent_key, it can serve
-- only the listing of children (parent_key and warehouse_id bound, a
-- range of name_key, in its order), so every lookup by name has exactly
-- one index to take (store/sqlstore/plan_internal_test.go checks the
-- plans on both databases).
DROP INDEX namespaces_children;
CREATE INDEX namespaces_children ON namespaces (parent_key, warehouse_id, name_key);
-- Postgres plans a table it has never analyzed as ten pages of rows it
-- cannot see, and on a fresh database took a whole-index scan of the
-- children index for a lookup by name. Analyzed, even empty, a table is
-- then estimated from its actual size as it grows (until autovacuum
-- analyzes it again), which keeps every lookup on its unique index.
ANALYZE warehouses, namespaces, catalog_objects;

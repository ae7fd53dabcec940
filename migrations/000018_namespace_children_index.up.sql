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

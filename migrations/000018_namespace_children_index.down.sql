DROP INDEX namespaces_children;
CREATE INDEX namespaces_children ON namespaces (warehouse_id, parent_key, name_key);

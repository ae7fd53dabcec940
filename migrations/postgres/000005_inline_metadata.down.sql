ALTER TABLE catalog_objects RESET (toast_tuple_target, fillfactor);

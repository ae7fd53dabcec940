DROP TABLE deleted_objects;

DROP TABLE pending_file_deletes;

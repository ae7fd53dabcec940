DROP TABLE file_index;
DROP TABLE file_index_leaves;

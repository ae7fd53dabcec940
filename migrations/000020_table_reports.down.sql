DROP TABLE table_reports;

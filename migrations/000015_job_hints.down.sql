DROP TABLE job_hints;

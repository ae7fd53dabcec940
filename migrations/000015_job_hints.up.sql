-- When the Unique job a change enqueues is known to be waiting until a
-- later time: a change within that time leaves River's (costly) unique
-- insert out, since the waiting job runs after it anyway. Written with
-- each such insert, in its transaction; see store/sqlstore/jobhints.go.
CREATE TABLE job_hints (
    key             TEXT PRIMARY KEY, -- kind, a space, the args JSON
    scheduled_until BIGINT NOT NULL   -- unix milliseconds
);

-- Idempotency keys remember a hash of the whole request (a key reused for
-- another request is refused) and are held under a short lease renewed by
-- the live holder, so that a key left in flight by a dead replica blocks
-- retries for seconds, not until it expires.
ALTER TABLE idempotency_keys ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
-- Set in the same transaction as each change the holder commits: a key that
-- changed the catalog but has no stored response is never run again.
ALTER TABLE idempotency_keys ADD COLUMN mutated INTEGER NOT NULL DEFAULT 0;

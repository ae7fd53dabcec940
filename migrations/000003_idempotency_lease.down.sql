ALTER TABLE idempotency_keys DROP COLUMN mutated;
ALTER TABLE idempotency_keys DROP COLUMN lease_until;
ALTER TABLE idempotency_keys DROP COLUMN owner;
ALTER TABLE idempotency_keys DROP COLUMN fingerprint;

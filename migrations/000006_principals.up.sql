-- Built-in service principals: they exchange client_id and client_secret
-- for short-lived tokens at POST /v1/oauth/tokens. The secret itself is
-- never stored, only its argon2id hash (salt and parameters encoded in the
-- string). secret_generation grows with every rotation; tokens carry the
-- generation they were issued under, so a rotation revokes them.
CREATE TABLE principals (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE,
    client_id         TEXT NOT NULL UNIQUE,
    secret_hash       TEXT NOT NULL,
    secret_generation BIGINT NOT NULL DEFAULT 1,
    created_at        BIGINT NOT NULL,
    rotated_at        BIGINT NOT NULL
);

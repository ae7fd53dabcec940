-- Role-based access control. Roles hold grants (a privilege on a
-- securable) and are assigned to assignees (builtin principal, OIDC
-- subject, OIDC group). Securables are named, not referenced by id: a grant
-- on a namespace covers whatever lives under that name, so the check needs
-- no join with the catalog tables. Unused columns of a securable hold ''
-- (never NULL) so that the unique constraint and equality lookups work.
CREATE TABLE roles (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);

CREATE TABLE role_grants (
    role_id    TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    privilege  TEXT NOT NULL,
    -- server, warehouse, namespace, table or view
    kind       TEXT NOT NULL,
    warehouse  TEXT NOT NULL DEFAULT '',
    -- namespace levels joined by 0x1F, as namespaces.name_key
    ns_key     TEXT NOT NULL DEFAULT '',
    name       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (role_id, privilege, kind, warehouse, ns_key, name)
);
-- The authorize and list queries start from the caller's roles and probe
-- their grants in one warehouse.
CREATE INDEX role_grants_lookup ON role_grants (role_id, warehouse, kind, ns_key, name);

CREATE TABLE role_assignments (
    role_id       TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    -- builtin, oidc or group
    assignee_kind TEXT NOT NULL,
    assignee_name TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (role_id, assignee_kind, assignee_name)
);
CREATE INDEX role_assignments_assignee ON role_assignments (assignee_kind, assignee_name, role_id);

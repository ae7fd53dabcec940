DROP TABLE role_assignments;
DROP TABLE role_grants;
DROP TABLE roles;
